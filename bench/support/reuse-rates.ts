// How often a recorded agent uses a piece of its context again, by what the context is and how many requests
// ago it arrived: the rates behind governance's "still needed" rule (src/governance/reuse-rates.ts). A piece is
// used by a reply when the reply copies a span (src/metrics/reply-spans.ts) whose newest holder in the history
// is that piece — an older copy does not count, since the newer one would serve.
import { contextKind, type ContextKind } from "../../src/metrics/context-kind.ts";
import { messageUnits, type GroundingUnit } from "../../src/metrics/grounding-units.ts";
import { replySpans } from "../../src/metrics/reply-spans.ts";
import type { Message, ToolCallBlock } from "../../src/model/message.ts";
import { recordedReply, requestPoints } from "../../src/replay/replay.ts";

/** Age buckets, in requests since the piece arrived (0: the first request that sees it). */
export const AGE_BUCKETS: readonly { readonly from: number; readonly to: number }[] = [
  { from: 0, to: 0 },
  { from: 1, to: 1 },
  { from: 2, to: 2 },
  { from: 3, to: 4 },
  { from: 5, to: 7 },
  { from: 8, to: 12 },
  { from: 13, to: 20 },
  { from: 21, to: 33 },
  { from: 34, to: 54 },
  { from: 55, to: Number.POSITIVE_INFINITY },
];

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
