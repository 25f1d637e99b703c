// OpenCode's context policy, from its documented behaviour (../shared/DESIGN.md, "What peers do").
import { leadingSystemEnd } from "../../src/governance/compaction-plan.ts";
import type { Processor } from "../../src/governance/processor.ts";
import { sumTokens } from "../../src/governance/processor.ts";
import {
  commitCompaction,
  marked,
  newestStepStart,
  payloadTokens,
  rewriteResults,
  summaryOf,
  turnStarts,
  windowScale,
} from "./peer-support.ts";

const PRUNED = "opencode:pruned";

/** Prune: outside the last 2 user turns, tool outputs beyond the newest 40k tool tokens are cleared when ≥ 20k are prunable. */
export const opencodePrune: Processor = {
  name: "opencode-prune",
  process(messages, context) {
    const scale = windowScale(context);
    const starts = turnStarts(messages);
    const protectedFrom = starts.length >= 2 ? starts.at(-2)! : 0;
    let seen = 0;
    let prunable = 0;
    const candidates: number[] = [];
    for (let index = protectedFrom - 1; index >= 0; index--) {
      const message = messages[index]!;
      if (message.role !== "tool" || marked(message, PRUNED)) continue;
      const tokens = context.tokensOf(message);
      seen += tokens;
      if (seen <= 40_000 * scale) continue;
      candidates.push(index);
      prunable += tokens;
    }
    if (prunable < 20_000 * scale) return messages;
    const output = [...messages];
    for (const index of candidates)
      output[index] = rewriteResults(messages[index]!, PRUNED, () => "[Old tool result content cleared]");
    context.emit({
      type: "tool-output-truncated",
      tokensBefore: prunable,
      tokensAfter: candidates.reduce((sum, index) => sum + context.tokensOf(output[index]!), 0),
      messageIds: candidates.map((index) => messages[index]!.id),
    });
    return output;
  },
};

/**
 * Compaction when the real usage reaches window − reserved: one checkpoint summary of everything before the
 * tail, the tail being the last 2 user turns within 8k tokens (at least the newest step).
 */
export const opencodeCompaction: Processor = {
  name: "opencode-compaction",
  async process(messages, context) {
    if (payloadTokens(messages, context) < context.window.usable) return messages;
    const start = leadingSystemEnd(messages);
    const starts = turnStarts(messages);
    let tail = starts.length >= 2 ? starts.at(-2)! : (starts.at(-1) ?? newestStepStart(messages));
    const newest = newestStepStart(messages);
    // Within 8k tokens: move the tail start forward over whole steps (never past the newest step).
    while (tail < newest && sumTokens(messages.slice(tail), context.tokensOf) > 8_000) {
      let next = tail + 1;
      while (next < newest && messages[next]!.role !== "assistant" && messages[next]!.role !== "user") next++;
      tail = next;
    }
    if (tail <= start) return messages;
    const summary = await summaryOf(messages.slice(start, tail), context);
    const next = [...messages.slice(0, start), summary, ...messages.slice(tail)];
    return commitCompaction(messages, next, context, "usage reached window − reserved", false);
  },
};
