// How often a recorded agent uses a piece of its context again, by what the context is and how many requests
// ago it arrived: the rates behind governance's "still needed" rule (src/governance/reuse-rates.ts). A piece is
// used by a reply when the reply copies a span (src/metrics/reply-spans.ts) whose newest holder in the history
// is that piece — an older copy does not count, since the newer one would serve.
import { REUSE_AGE_LIMITS } from "../../src/governance/reuse-rates.ts";
import { contextKind, type ContextKind } from "../../src/metrics/context-kind.ts";
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

const KINDS: readonly ContextKind[] = ["read", "search", "edit", "shell", "other", "written"];

/** Empty counts. */
export function emptyReuseCounts(): ReuseCounts {
  return Object.fromEntries(
    KINDS.map((kind) => [
      kind,
      { alive: AGE_BUCKETS.map(() => 0), used: AGE_BUCKETS.map(() => 0), pieces: 0 },
    ]),
  ) as ReuseCounts;
}

function bucketOf(age: number): number {
  return AGE_BUCKETS.findIndex((bucket) => age >= bucket.from && age <= bucket.to);
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
      const bucket = bucketOf(request - piece.born);
      entry.alive[bucket]!++;
      if (piece.uses.has(request)) entry.used[bucket]!++;
    }
  }
}

/** The measured rates: per kind, the share of requests at each age whose reply used the piece. */
export function reuseRates(counts: ReuseCounts): Record<ContextKind, number[]> {
  return Object.fromEntries(
    KINDS.map((kind) => [
      kind,
      counts[kind].alive.map((alive, bucket) => (alive === 0 ? 0 : counts[kind].used[bucket]! / alive)),
    ]),
  ) as Record<ContextKind, number[]>;
}

/** `counts` less one conversation's counts: what the other conversations measured (leave-one-out). */
export function withoutCounts(counts: ReuseCounts, left: ReuseCounts): ReuseCounts {
  return Object.fromEntries(
    KINDS.map((kind) => [
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
 * few uses — and governance relies on it: a piece once let go is never needed again.
 */
export function fittedReuseRates(counts: ReuseCounts): Record<ContextKind, number[]> {
  return Object.fromEntries(
    KINDS.map((kind) => [kind, nonIncreasingFit(counts[kind].used, counts[kind].alive)]),
  ) as Record<ContextKind, number[]>;
}

/**
 * Pool-adjacent-violators on used/alive ratios. A bucket nothing was alive in carries no weight: it joins the
 * block before it (the first ones, the block after).
 */
function nonIncreasingFit(used: readonly number[], alive: readonly number[]): number[] {
  const rate = (block: { used: number; alive: number }) => (block.alive === 0 ? 0 : block.used / block.alive);
  const blocks: { used: number; alive: number; size: number }[] = [];
  for (const [bucket, count] of alive.entries()) {
    blocks.push({ used: used[bucket]!, alive: count, size: 1 });
    while (blocks.length > 1) {
      const last = blocks.at(-1)!;
      const before = blocks.at(-2)!;
      if (last.alive > 0 && rate(before) >= rate(last)) break;
      blocks.splice(-2, 2, {
        used: before.used + last.used,
        alive: before.alive + last.alive,
        size: before.size + last.size,
      });
    }
  }
  return blocks.flatMap((block) => Array.from({ length: block.size }, () => rate(block)));
}
