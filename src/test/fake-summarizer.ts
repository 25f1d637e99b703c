import { messageText, toolCallsOf } from "../model/blocks.ts";
import type { Summarizer, SummarizerPrice, SummarizeRequest } from "../summarize/summarizer.ts";

/**
 * A scripted summarizer for tests. By default it writes one short line per message it was given (and keeps the
 * previous summary); pass `respond` to return anything (e.g. something huge, to test the inflation guard) or
 * throw. Every request is recorded.
 *
 * @example
 * const summarizer = new FakeSummarizer({ respond: () => "summary" });
 */
export class FakeSummarizer implements Summarizer {
  readonly name = "fake";
  readonly requests: SummarizeRequest[] = [];
  readonly price: SummarizerPrice | undefined;
  readonly #respond: ((request: SummarizeRequest) => string | Promise<string>) | undefined;

  constructor(
    options: {
      respond?: (request: SummarizeRequest) => string | Promise<string>;
      /** Makes it priced like a model (see `Summarizer.price`); free by default. */
      price?: SummarizerPrice;
    } = {},
  ) {
    this.#respond = options.respond;
    this.price = options.price;
  }

  async summarize(request: SummarizeRequest): Promise<string> {
    this.requests.push(request);
    if (this.#respond) return this.#respond(request);
    const lines = request.messages.map((message) => {
      const calls = toolCallsOf(message).map((call) => call.name);
      const text = messageText(message).slice(0, 60);
      return `- ${message.role}${calls.length ? ` called ${calls.join(",")}` : ""}${text ? `: ${text}` : ""}`;
    });
    return [request.previousSummary, ...lines]
      .filter(Boolean)
      .join("\n")
      .slice(0, request.maxTokens * 4);
  }
}
