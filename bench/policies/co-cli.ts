// The co-cli seed's context policy (../shared/seeds/001_*.txt and DESIGN.md, "What peers do").
import type { Processor } from "../../src/governance/processor.ts";
import type { Message } from "../../src/model/message.ts";
import { commitCompaction, marked, outputChars, rewriteResults, summaryOf } from "./peer-support.ts";

const TRIMMED = "co-cli:trimmed";
const TRIM_CHARS = 2_000;
const MAX_MESSAGES = 40;
const TAIL = Math.max(4, Math.floor(MAX_MESSAGES / 2));

/** Tool-output trimming: outputs above 2,000 characters in all but the last 2 messages are cut. */
export const coCliTrimming: Processor = {
  name: "co-cli-trimming",
  process(messages) {
    let output: Message[] | undefined;
    for (let index = 0; index < messages.length - 2; index++) {
      const message = messages[index]!;
      if (message.role !== "tool" || marked(message, TRIMMED) || outputChars(message) <= TRIM_CHARS) continue;
      output ??= [...messages];
      output[index] = rewriteResults(
        message,
        TRIMMED,
        (text) => `${text.slice(0, TRIM_CHARS)}[…truncated, ${text.length} chars total]`,
      );
    }
    return output ?? messages;
  },
};

/** Index just past the first run: up to and including the first assistant reply with text. */
function firstRunEnd(messages: readonly Message[]): number {
  const index = messages.findIndex(
    (message) =>
      message.role === "assistant" &&
      message.content.some((block) => block.type === "text" && block.text.trim() !== ""),
  );
  return index < 0 ? 0 : index + 1;
}

/** Sliding window above 40 messages: head (first run) + summary of the middle + the last 20 messages. */
export const coCliWindow: Processor = {
  name: "co-cli-window",
  async process(messages, context) {
    if (messages.length <= MAX_MESSAGES) return messages;
    const head = firstRunEnd(messages);
    let tail = messages.length - TAIL;
    while (tail > head && messages[tail]!.role === "tool") tail--;
    if (tail - head < 2) return messages;
    const summary = await summaryOf(messages.slice(head, tail), context);
    const next = [...messages.slice(0, head), summary, ...messages.slice(tail)];
    return commitCompaction(messages, next, context, "more than 40 messages", false);
  },
};
