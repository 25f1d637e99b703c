// Gemini CLI's context policy, from its documented behaviour (../shared/DESIGN.md, "What peers do").
import { leadingSystemEnd } from "../../src/governance/compaction-plan.ts";
import type { Processor } from "../../src/governance/processor.ts";
import { headTail } from "../../src/governance/truncate-text.ts";
import type { Message } from "../../src/model/message.ts";
import { opensTurn } from "../../src/model/turns.ts";
import {
  commitCompaction,
  marked,
  outputChars,
  payloadTokens,
  rewriteResults,
  summaryOf,
  windowScale,
} from "./peer-support.ts";

const MASK = "gemini-cli:masked";

/** Preview of a masked output: its first and last 10 lines; the full output goes to a file. */
function maskPreview(text: string): string {
  const lines = text.split("\n");
  if (lines.length <= 20) return text;
  return [
    ...lines.slice(0, 10),
    `[… ${lines.length - 20} lines masked; full output saved to a file …]`,
    ...lines.slice(-10),
  ].join("\n");
}

/** Tool-output masking: newest 50k tool tokens protected; older outputs masked once ≥ 30k tokens are prunable. */
export const geminiMasking: Processor = {
  name: "gemini-cli-masking",
  process(messages, context) {
    const scale = windowScale(context);
    let seen = 0;
    let prunable = 0;
    const candidates: number[] = [];
    for (let index = messages.length - 1; index >= 0; index--) {
      const message = messages[index]!;
      if (message.role !== "tool" || marked(message, MASK)) continue;
      const tokens = context.tokensOf(message);
      seen += tokens;
      if (seen <= 50_000 * scale) continue;
      candidates.push(index);
      prunable += tokens;
    }
    if (prunable < 30_000 * scale) return messages;
    const output = [...messages];
    for (const index of candidates) output[index] = rewriteResults(messages[index]!, MASK, maskPreview);
    context.emit({
      type: "tool-output-offloaded",
      refs: [],
      tokensBefore: prunable,
      tokensAfter: candidates.reduce((sum, index) => sum + context.tokensOf(output[index]!), 0),
      messageIds: candidates.map((index) => messages[index]!.id),
    });
    return output;
  },
};

/**
 * Compression at 50% of the window: everything before the newest 30% (split only before a real user turn) becomes
 * one `<state_snapshot>` anchored on the previous one; older outputs are cut (20% head / 80% tail of ≤ 40k
 * characters) before summarising; a snapshot that does not shrink the context is discarded.
 */
export const geminiCompression: Processor = {
  name: "gemini-cli-compression",
  async process(messages, context) {
    if (payloadTokens(messages, context) <= 0.5 * context.window.contextWindow) return messages;
    const start = leadingSystemEnd(messages);
    const chars = messages.map((message) => JSON.stringify(message.content).length);
    const total = chars.reduce((sum, value) => sum + value, 0);
    let split = -1;
    let before = 0;
    for (let index = start; index < messages.length; index++) {
      if (before >= 0.7 * total && opensTurn(messages[index]!)) {
        split = index;
        break;
      }
      before += chars[index]!;
    }
    if (split < 0) {
      // No real user turn after the 70% mark: the last one that leaves something to compress.
      for (let index = messages.length - 1; index > start; index--) {
        if (opensTurn(messages[index]!)) {
          split = index;
          break;
        }
      }
    }
    if (split <= start) return messages;
    const replaced: Message[] = messages
      .slice(start, split)
      .map((message) =>
        message.role === "tool" && outputChars(message) > 40_000
          ? rewriteResults(message, "gemini-cli:cut", (text) =>
              headTail(text, 40_000, 0.2, "[… truncated …]"),
            )
          : message,
      );
    const snapshot = await summaryOf(replaced, context);
    const next = [...messages.slice(0, start), snapshot, ...messages.slice(split)];
    return commitCompaction(messages, next, context, "50% of the window");
  },
};
