// How much of what a recorded agent's own compaction summary kept ctxkit's summary of the same range keeps, and
// at what size. Claude Code writes its summary into the transcript (`isCompactSummary`, imported as a summary
// message); the range is everything of the conversation before it (since the previous summary). What a summary
// "kept" is measured with the grounding units (src/metrics/grounding-units.ts): the distinctive tokens — paths,
// identifiers, literals — and whole lines of the range that the summary repeats.
import { messageUnits, type GroundingUnit } from "../../src/metrics/grounding-units.ts";
import { replySpans } from "../../src/metrics/reply-spans.ts";
import { messageText } from "../../src/model/blocks.ts";
import type { Message } from "../../src/model/message.ts";
import type { Summarizer } from "../../src/summarize/summarizer.ts";
import type { TokenCounter } from "../../src/tokens/token-counter.ts";

/** One recorded compaction and ctxkit's summary of the same range. */
export interface SummaryCoverage {
  /** Messages the recorded summary replaced. */
  readonly messages: number;
  readonly recordedTokens: number;
  readonly ctxkitTokens: number;
  /** Units of the range the recorded summary kept. */
  readonly kept: number;
  /** Of those, the share ctxkit's summary keeps too. */
  readonly coverage: number;
  /** Units of the range ctxkit's summary keeps that the recorded one does not. */
  readonly extra: number;
  /** Units of the range the agent's replies after the compaction used (copied), and the share each summary kept. */
  readonly usedAfter: number;
  readonly recordedUsedShare: number;
  readonly ctxkitUsedShare: number;
}

function unitsOfText(text: string): Set<GroundingUnit> {
  return new Set(
    messageUnits({
      id: "",
      sessionId: "",
      seq: 0,
      turn: 0,
      role: "user",
      content: [{ type: "text", text }],
      createdAt: "",
    }),
  );
}

/**
 * Every compaction summary the recorded agent left in `messages`, compared with `summarizer`'s summary of the
 * same range at the recorded summary's size (so a larger summary cannot buy its coverage).
 *
 * @example
 * const rows = await summaryCoverage(conversation.messages, createExtractiveSummarizer({ counter }), counter);
 */
export async function summaryCoverage(
  messages: readonly Message[],
  summarizer: Summarizer,
  counter: TokenCounter,
): Promise<SummaryCoverage[]> {
  const rows: SummaryCoverage[] = [];
  let start = 0;
  for (const [index, message] of messages.entries()) {
    if (message.kind !== "summary") continue;
    const range = messages.slice(start, index).filter((candidate) => candidate.kind === undefined);
    start = index + 1;
    if (range.length === 0) continue;
    const inRange = new Set<GroundingUnit>();
    for (const candidate of range) for (const unit of messageUnits(candidate)) inRange.add(unit);
    const recordedText = messageText(message);
    const recorded = [...unitsOfText(recordedText)].filter((unit) => inRange.has(unit));
    const recordedTokens = counter.countText(recordedText);
    const summary = await summarizer.summarize({ messages: range, maxTokens: recordedTokens });
    const ours = unitsOfText(summary);
    const covered = recorded.filter((unit) => ours.has(unit)).length;
    const recordedSet = new Set(recorded);
    // What the agent went on to use: spans of its later replies that only the summarised range held.
    const used = new Set<GroundingUnit>();
    for (const message of messages.slice(index + 1)) {
      if (message.role !== "assistant") continue;
      for (const span of replySpans([message])) if (inRange.has(span.unit)) used.add(span.unit);
    }
    const share = (units: ReadonlySet<GroundingUnit>) =>
      used.size === 0 ? 1 : [...used].filter((unit) => units.has(unit)).length / used.size;
    rows.push({
      messages: range.length,
      recordedTokens,
      ctxkitTokens: counter.countText(summary),
      kept: recorded.length,
      coverage: recorded.length === 0 ? 1 : covered / recorded.length,
      extra: [...ours].filter((unit) => inRange.has(unit) && !recordedSet.has(unit)).length,
      usedAfter: used.size,
      recordedUsedShare: share(recordedSet),
      ctxkitUsedShare: share(ours),
    });
  }
  return rows;
}
