import { llmSummaryTokens } from "../summarize/llm-summarizer.ts";
import type { Summarizer } from "../summarize/summarizer.ts";
import type { TokenCounter } from "../tokens/token-counter.ts";
import type { SummaryCall } from "./replay-meter.ts";

/**
 * Wraps a summarizer so every summary it makes is reported as the LLM call that would have made it (its prompt
 * and its answer, in tokens), whatever the summarizer really is — the offline one costs nothing, but a user on an
 * LLM summarizer pays for each call. Failed calls are not reported (nothing was billed... by an offline one).
 *
 * @example
 * const summarizer = meteredSummarizer(createExtractiveSummarizer(), counter, (call) => meter.summary(call));
 */
export function meteredSummarizer(
  inner: Summarizer,
  counter: Pick<TokenCounter, "countText">,
  onCall: (call: SummaryCall) => void,
): Summarizer {
  return {
    name: inner.name,
    ...(inner.price !== undefined && { price: inner.price }),
    async summarize(request) {
      const summary = await inner.summarize(request);
      onCall(llmSummaryTokens(request, summary, counter));
      return summary;
    },
  };
}
