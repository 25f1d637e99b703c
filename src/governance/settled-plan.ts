import { toolCallsOf } from "../model/blocks.ts";
import { governancePricing } from "./governor-settings.ts";
import type { Message } from "../model/message.ts";
import { stepEnd } from "../model/tool-pairing.ts";
import { groupTurns, opensTurn } from "../model/turns.ts";
import { computeBoundaries, offloadThresholds } from "./boundaries.ts";
import { expectedRemainingRequests } from "./cache-economics.ts";
import { leadingSystemEnd, type Segment } from "./compaction-plan.ts";
import { summaryBudget } from "./processors/compact-history.ts";
import { sumTokens, type CompactionGuard, type ProcessorContext } from "./processor.ts";
import { neededContext } from "./needed-context.ts";

/**
 * The expected size of a summary: a fixed part (header, headings) plus a share of the fresh messages and of the
 * earlier summaries it merges (fitted on the extractive summarizer's output on the shared transcripts).
 */
const SUMMARY_OVERHEAD = 60;
const FRESH_SHARE = 0.22;
const MERGED_SHARE = 0.9;

/**
 * The settled part of a view: from `start` to the tail (the newest step and the protection window of recent
 * tool output), split around the messages kept verbatim (`kept`). Every piece starts and ends on a step boundary.
 */
export function settledSegments(
  messages: readonly Message[],
  start: number,
  protectedFrom: number,
  kept: ReadonlySet<number>,
): Segment[] {
  let tailStart = Math.min(protectedFrom, messages.length);
  while (tailStart > start && !startsStep(messages[tailStart])) tailStart--;
  const segments: Segment[] = [];
  let pieceStart = start;
  for (let index = start; index <= tailStart; index++) {
    if (index < tailStart && !kept.has(index)) continue;
    if (index - pieceStart >= 2) segments.push({ start: pieceStart, end: index });
    pieceStart = index + 1;
  }
  return segments;
}

/**
 * What settled-history compaction keeps verbatim besides the tail: the current instruction; the first one and the
 * dialogue of the `dialogueTurns` turns before the current one (each one's user message and final reply, so the
 * conversation still reads as one), when each is small (a pasted log is left to the summary, which keeps
 * instructions verbatim too); and the whole step of every piece still needed (`neededContext`: a call keeps all its results).
 */
export function keptVerbatim(
  messages: readonly Message[],
  needed: ReadonlySet<number>,
  options: {
    readonly dialogueTurns: number;
    readonly maxDialogueTokens: number;
    readonly tokensOf: (message: Message) => number;
  },
): Set<number> {
  const kept = new Set<number>();
  const keepSmall = (index: number) => {
    if (options.tokensOf(messages[index]!) <= options.maxDialogueTokens) kept.add(index);
  };
  const turns = groupTurns(messages).filter((turn) => opensTurn(messages[turn.start]!));
  const current = turns.at(-1);
  if (current !== undefined) kept.add(current.start);
  if (turns.length > 1) keepSmall(turns[0]!.start);
  for (const turn of turns.slice(-options.dialogueTurns - 1, -1)) {
    keepSmall(turn.start);
    const reply = messages[turn.end - 1]!;
    if (reply.role === "assistant" && toolCallsOf(reply).length === 0) keepSmall(turn.end - 1);
  }
  for (const index of needed) {
    // The whole step stays: the call with its results, or the writing call with its confirmation.
    const stepStart = messages.findLastIndex((message, at) => at <= index && message.role === "assistant");
    for (let at = Math.max(0, stepStart); at < stepEnd(messages, stepStart); at++) kept.add(at);
  }
  return kept;
}

function startsStep(message: Message | undefined): boolean {
  return message === undefined || message.role === "assistant" || opensTurn(message);
}

/** A way to compact the settled part, with its estimated figures. */
export interface SettledPlan {
  readonly segments: readonly Segment[];
  readonly segmentTokens: readonly number[];
  /** The expected size of each segment's summary. */
  readonly summaryTokens: readonly number[];
  /** Net saving over the expected remaining requests, in units of the uncached input price. */
  readonly net: number;
}

/** The plan's estimated figures; undefined when it would merge summaries into one that cannot hold them. */
function estimatePlan(
  messages: readonly Message[],
  segments: readonly Segment[],
  context: ProcessorContext,
  summaryMaxTokens: number,
): SettledPlan | undefined {
  const budget = summaryBudget(summaryMaxTokens, context);
  const sizeRatio = context.guard.summarySizeRatio ?? 1;
  const segmentTokens: number[] = [];
  const summaryTokens: number[] = [];
  for (const segment of segments) {
    let fresh = 0;
    let summaries = 0;
    for (const message of messages.slice(segment.start, segment.end)) {
      if (message.kind === "summary") summaries += context.tokensOf(message);
      else fresh += context.tokensOf(message);
    }
    segmentTokens.push(fresh + summaries);
    const expected = (SUMMARY_OVERHEAD + fresh * FRESH_SHARE + summaries * MERGED_SHARE) * sizeRatio;
    // Merging earlier summaries into one over the budget would drop what they kept, only to save tokens.
    if (summaries > 0 && expected > budget) return undefined;
    summaryTokens.push(Math.min(budget, Math.ceil(expected)));
  }
  // A summarizer that calls a model is paid before anything is saved: the plan must cover it too.
  const price = context.summarizer.price;
  let summarizing = 0;
  if (price !== undefined)
    segmentTokens.forEach((tokens, index) => {
      summarizing += tokens * price.input + summaryTokens[index]! * price.output;
    });
  const net = netSaving(messages, segments, segmentTokens, summaryTokens, context) - summarizing;
  return { segments, segmentTokens, summaryTokens, net };
}

/**
 * Moves the summarizer's size ratio (actual over expected) toward what it just produced: the estimate adapts to
 * whatever summarizer the session uses (the shares above were fitted on the extractive one).
 */
export function learnSummarySize(
  guard: CompactionGuard,
  actual: readonly number[],
  expected: readonly number[],
): void {
  const ratio =
    actual.reduce((sum, tokens) => sum + tokens, 0) /
    Math.max(
      1,
      expected.reduce((sum, tokens) => sum + tokens, 0),
    );
  guard.summarySizeRatio = 0.5 * (guard.summarySizeRatio ?? 1) + 0.5 * ratio;
}

/**
 * Saving of a plan over the expected remaining requests minus re-writing the cached prefix after its start (not
 * counting the summaries' own price, spent by the time this decides whether to apply them).
 */
export function netSaving(
  messages: readonly Message[],
  segments: readonly Segment[],
  segmentTokens: readonly number[],
  summaryTokens: readonly number[],
  context: ProcessorContext,
): number {
  if (segments.length === 0) return 0;
  let saved = 0;
  segmentTokens.forEach((tokens, index) => (saved += tokens - summaryTokens[index]!));
  // What the provider's cache would have served and must now be written again: from where its cached prefix
  // stops (a breakpoint before the first summarised segment) to the end of what was already sent.
  const start =
    context.rewriteStart === undefined ? segments[0]!.start : context.rewriteStart(segments[0]!.start);
  const rewritten =
    start === undefined
      ? 0
      : Math.max(0, sumTokens(messages.slice(start), context.tokensOf) - saved - (context.freshTokens ?? 0));
  const pricing = governancePricing(context.settings);
  const remaining = expectedRemainingRequests(context.requestsSoFar ?? 0);
  return saved * pricing.read * remaining - rewritten * (pricing.write - pricing.read);
}

/**
 * How to compact the settled history of `messages`, if anything pays: two ways are priced — a new summary of
 * what follows the newest one (earlier summaries, and the cached prefix up to them, stay), or one summary
 * merging the earlier ones with it (smaller, but re-written from further back) — and for each, its later pieces
 * alone (when leaving the earliest as they are saves more). The plan that saves the most over the expected
 * remaining requests, net of the summarizer's price when it calls a model, wins.
 */
export function planSettledCompaction(
  messages: readonly Message[],
  context: ProcessorContext,
  options: { readonly summaryMaxTokens: number; readonly dialogueTurns: number },
): SettledPlan | undefined {
  const head = leadingSystemEnd(messages);
  const firstSummary = messages.findIndex((message, index) => index >= head && message.kind === "summary");
  const newestSummary = messages.findLastIndex((message) => message.kind === "summary");
  const { protectedToolsFrom, newestStep } = computeBoundaries(
    messages,
    context.tokensOf,
    offloadThresholds(context).protect,
  );
  const kept = keptVerbatim(messages, neededContext(messages, context), {
    dialogueTurns: options.dialogueTurns,
    maxDialogueTokens: Math.floor(context.window.usable * 0.02),
    tokensOf: context.tokensOf,
  });
  let best: SettledPlan | undefined;
  for (const start of new Set([Math.max(head, newestSummary + 1), firstSummary < 0 ? head : firstSummary])) {
    const segments = settledSegments(messages, start, Math.min(protectedToolsFrom, newestStep), kept);
    for (let first = 0; first < segments.length; first++) {
      const plan = estimatePlan(messages, segments.slice(first), context, options.summaryMaxTokens);
      if (plan !== undefined && plan.net > 0 && (best === undefined || plan.net > best.net)) best = plan;
    }
  }
  return best;
}
