// How often a recorded agent uses a piece of its context again, by what the context is and how many requests
// ago it arrived: the rates behind governance's "still needed" rule (src/governance/reuse-rates.ts). A piece is
// used by a reply when the reply copies a span (src/metrics/reply-spans.ts) whose newest holder in the history
// is that piece — an older copy does not count, since the newer one would serve.
import { nonIncreasingFit, REUSE_AGE_LIMITS, reuseBucket } from "../../src/governance/reuse-rates.ts";
import { CONTEXT_KINDS, contextKind, type ContextKind } from "../../src/metrics/context-kind.ts";
import { messageUnits, type GroundingUnit } from "../../src/metrics/grounding-units.ts";
import { replySpans } from "../../src/metrics/reply-spans.ts";
import type { Message, ToolCallBlock } from "../../src/model/message.ts";
import { recordedReply, requestPoints } from "../../src/replay/replay.ts";

/** Age buckets, in requests since the piece arrived (0: the first request that sees it): governance's own. */
export const AGE_BUCKETS: readonly { readonly from: number; readonly to: number }[] = REUSE_AGE_LIMITS.map(
  (to, index) => ({ from: index === 0 ? 0 : REUSE_AGE_LIMITS[index - 1]! + 1, to }),
);

/** Per kind and age bucket: requests a piece was alive for, and how many of them used it. */
export type ReuseCounts = Record<ContextKind, { alive: number[]; used: number[]; pieces: number }>;

/** Empty counts. */
export function emptyReuseCounts(): ReuseCounts {
  return Object.fromEntries(
    CONTEXT_KINDS.map((kind) => [
      kind,
      { alive: AGE_BUCKETS.map(() => 0), used: AGE_BUCKETS.map(() => 0), pieces: 0 },
    ]),
  ) as ReuseCounts;
}

/** Adds one conversation (its replayable messages) to `counts`. */
export function countReuse(messages: readonly Message[], counts: ReuseCounts): void {
  const points = requestPoints(messages);
  const calls = new Map<string, Pick<ToolCallBlock, "name" | "input">>();
  const newestHolder = new Map<GroundingUnit, number>();
  const pieces: { index: number; kind: ContextKind; born: number; uses: Set<number> }[] = [];
  let indexed = 0;
  for (const [request, point] of points.entries()) {
    for (; indexed < point; indexed++) {
      const message = messages[indexed]!;
      for (const block of message.content) if (block.type === "tool-call") calls.set(block.id, block);
      for (const unit of messageUnits(message)) newestHolder.set(unit, indexed);
      const kind = contextKind(message, calls);
      if (kind !== undefined) pieces.push({ index: indexed, kind, born: request, uses: new Set() });
    }
    const sources = new Set<number>();
    for (const span of replySpans(recordedReply(messages, point))) {
      const holder = newestHolder.get(span.unit);
      if (holder !== undefined) sources.add(holder);
    }
    for (const piece of pieces) if (sources.has(piece.index)) piece.uses.add(request);
  }
  for (const piece of pieces) {
    const entry = counts[piece.kind];
    entry.pieces++;
    for (let request = piece.born; request < points.length; request++) {
      const bucket = reuseBucket(request - piece.born);
      entry.alive[bucket]!++;
      if (piece.uses.has(request)) entry.used[bucket]!++;
    }
  }
}

/** The measured rates: per kind, the share of requests at each age whose reply used the piece. */
export function reuseRates(counts: ReuseCounts): Record<ContextKind, number[]> {
  return Object.fromEntries(
    CONTEXT_KINDS.map((kind) => [
      kind,
      counts[kind].alive.map((alive, bucket) => (alive === 0 ? 0 : counts[kind].used[bucket]! / alive)),
    ]),
  ) as Record<ContextKind, number[]>;
}

/** `counts` less one conversation's counts: what the other conversations measured (leave-one-out). */
export function withoutCounts(counts: ReuseCounts, left: ReuseCounts): ReuseCounts {
  return Object.fromEntries(
    CONTEXT_KINDS.map((kind) => [
      kind,
      {
        alive: counts[kind].alive.map((alive, bucket) => alive - left[kind].alive[bucket]!),
        used: counts[kind].used.map((used, bucket) => used - left[kind].used[bucket]!),
        pieces: counts[kind].pieces - left[kind].pieces,
      },
    ]),
  ) as ReuseCounts;
}

/**
 * The rates as governance takes them: per kind, the non-increasing sequence closest to the measured rates
 * (weighted least squares, each bucket weighted by the requests it counted: pool-adjacent-violators). A piece
 * cannot grow more likely to be used with age — a bucket that measured more uses than a younger one is noise of a
 * few uses — and governance relies on it: a piece it let go is not needed again while the rates stand.
 */
export function fittedReuseRates(counts: ReuseCounts): Record<ContextKind, number[]> {
  return Object.fromEntries(
    CONTEXT_KINDS.map((kind) => [kind, nonIncreasingFit(counts[kind].used, counts[kind].alive)]),
  ) as Record<ContextKind, number[]>;
}

/**
 * How many requests the corpus's rates are worth against one session's own counts: the size of the beta prior
 * whose spread matches how much the sessions' rates differ beyond what their sample sizes explain (the
 * method-of-moments estimate of a beta-binomial, with its degrees-of-freedom corrections, pooled over every kind
 * and followed age a rate was measured for in three sessions or more).
 */
export function reuseRatesWeight(sessions: readonly ReuseCounts[]): number {
  let spread = 0;
  let excess = 0;
  for (const kind of CONTEXT_KINDS) {
    for (let bucket = 0; bucket < AGE_BUCKETS.length - 1; bucket++) {
      const cells = sessions
        .map((counts) => ({ used: counts[kind].used[bucket]!, alive: counts[kind].alive[bucket]! }))
        .filter((cell) => cell.alive > 0);
      const alive = cells.reduce((total, cell) => total + cell.alive, 0);
      const rate = cells.reduce((total, cell) => total + cell.used, 0) / alive;
      if (cells.length < 3 || rate === 0) continue;
      const variance = rate * (1 - rate);
      const between = cells.reduce(
        (total, cell) => total + cell.alive * (cell.used / cell.alive - rate) ** 2,
        0,
      );
      const squares = cells.reduce((total, cell) => total + cell.alive ** 2, 0);
      spread += (alive - squares / alive) * variance;
      excess += between - (cells.length - 1) * variance;
    }
  }
  return excess <= 0 ? Number.POSITIVE_INFINITY : spread / excess - 1;
}
