// Codex CLI's context policy, from its documented behaviour (../shared/DESIGN.md, "What peers do").
import { leadingSystemEnd } from "../../src/governance/compaction-plan.ts";
import type { Processor } from "../../src/governance/processor.ts";
import { headTail } from "../../src/governance/truncate-text.ts";
import type { Message } from "../../src/model/message.ts";
import { opensTurn } from "../../src/model/turns.ts";
import {
  commitCompaction,
  marked,
  newestStepStart,
  payloadTokens,
  rewriteResults,
  summaryOf,
  windowScale,
} from "./peer-support.ts";

const TRUNCATED = "codex:truncated";

/** Model-context truncation: every tool output above 10k tokens is cut in the middle on line boundaries. */
export const codexTruncation: Processor = {
  name: "codex-truncation",
  process(messages, context) {
    let output: Message[] | undefined;
    messages.forEach((message, index) => {
      const tokens = context.tokensOf(message);
      if (message.role !== "tool" || marked(message, TRUNCATED) || tokens <= 10_000) return;
      output ??= [...messages];
      output[index] = rewriteResults(message, TRUNCATED, (text) =>
        headTail(
          text,
          Math.floor((text.length * 10_000) / tokens),
          0.5,
          `[… ${tokens - 10_000} tokens truncated …]`,
        ),
      );
    });
    return output ?? messages;
  },
};

/**
 * Compaction at 90% of the window: the history is replaced by the user messages (newest first, up to 20k
 * tokens) and a handoff summary of everything; the newest step stays when the request is inside a run.
 */
export const codexCompaction: Processor = {
  name: "codex-compaction",
  async process(messages, context) {
    if (payloadTokens(messages, context) <= 0.9 * context.window.contextWindow) return messages;
    const start = leadingSystemEnd(messages);
    const newest = newestStepStart(messages);
    const end = newest < messages.length && newest > start ? newest : messages.length;
    const kept: Message[] = [];
    let budget = 20_000 * windowScale(context);
    for (let index = end - 1; index >= start; index--) {
      const message = messages[index]!;
      if (!opensTurn(message)) continue;
      budget -= context.tokensOf(message);
      if (budget < 0) break;
      kept.unshift(message);
    }
    const summary = await summaryOf(messages.slice(start, end), context);
    const next = [...messages.slice(0, start), ...kept, summary, ...messages.slice(end)];
    return commitCompaction(messages, next, context, "90% of the window", false);
  },
};
