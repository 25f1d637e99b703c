// Calibration of the prompt-cache model (src/pricing/prompt-cache.ts) on what Claude Code really sent and was
// billed for. A recorded Claude Code session reports, per request, the tokens Anthropic read from its cache,
// wrote to it, and left uncached. We rebuild what Claude Code sent — its own breakpoints (system prompt and
// tools, and its newest message), its cache TTL — and price it with the model; the model must reproduce the
// recorded cache-read and cache-write totals.
//
// Token positions come from the recorded usage, so the check is about the cache's semantics (which prefix is
// written, read, refreshed and expired), not about our tokenizer: request k sends the prefix it sent before
// plus what came since (`input − uncached tail` tokens up to its last breakpoint), then its uncached tail.
import type { ImportedConversation } from "../../src/formats/transcripts/index.ts";
import { cacheProfileFor } from "../../src/pricing/cache-profile.ts";
import { PromptCache, type PayloadSegment } from "../../src/pricing/prompt-cache.ts";
import { replyTime, requestPoints, requestTime } from "../../src/replay/replay.ts";

/** Seconds between a reply's recorded time and the end of its response (an allowance, see below). */
const RESPONSE_END_SECONDS = 5;

/** Recorded and modelled cache totals of one session. */
export interface CacheCalibration {
  /**
   * Requests compared. Not compared: the first one, and any sent after the cache expired — the cache's state
   * then depends on what else the user ran (another session warms the same system prompt), not on this session.
   */
  readonly requests: number;
  readonly recorded: { readonly read: number; readonly write: number };
  readonly modelled: { readonly read: number; readonly write: number };
  /** The session wrote 1-hour entries (Claude Code chose the 1-hour TTL). */
  readonly longTtl: boolean;
  /**
   * Requests whose recorded cache read stopped short of the prefix the previous request had cached, although
   * that entry could not have expired yet: Claude Code changed what it sent before that point (a re-rendered
   * reminder, an interrupt, a proxy in between) in a way the transcript does not record, so no model can see it.
   */
  readonly clientRewrites: number;
}

/**
 * Re-prices the main conversation of a Claude Code session with the cache model and compares it with what
 * Anthropic billed. Undefined when the session has fewer than two requests with usage.
 *
 * @example
 * const calibration = calibrateCache(conversation);
 * calibration && calibration.modelled.read / calibration.recorded.read - 1; // the read error
 */
export function calibrateCache(conversation: ImportedConversation): CacheCalibration | undefined {
  // Claude Code's own compaction summaries are part of what it sent.
  const messages = conversation.messages.filter((message) => message.kind !== "marker");
  const points = requestPoints(messages).filter((point) => messages[point]!.usage !== undefined);
  if (points.length < 2) return undefined;
  const model = messages.find((message) => message.model !== undefined)?.model ?? "claude-sonnet-4-5";
  const longTtl = messages.some((message) => (message.usage?.cacheWriteLong ?? 0) > 0);
  const cache = new PromptCache(cacheProfileFor(model, { provider: "anthropic" }));
  const recorded = { read: 0, write: 0 };
  const modelled = { read: 0, write: 0 };
  let segments: PayloadSegment[] = [];
  let sent = 0;
  let chain = 0;
  let previousPoint = 0;
  let previousCached = 0;
  let previousReply = 0;
  let clientRewrites = 0;
  let compared = 0;
  const ttl = longTtl ? 3_600_000 : 300_000;
  for (const [index, point] of points.entries()) {
    const usage = messages[point]!.usage!;
    const read = usage.cacheRead ?? 0;
    const write = usage.cacheWrite ?? 0;
    const tail = usage.input - read - write;
    const prefix = usage.input - tail;
    const since = messages.slice(previousPoint, point);
    const summarised = since.some((message) => message.kind === "summary");
    const restart = index === 0 || prefix < sent || summarised;
    const at = requestTime(messages, point);
    const expired = at - previousReply >= ttl;
    if (index > 0 && !summarised && !expired && read < previousCached - 64) clientRewrites++;
    if (restart) {
      chain++;
      // The system prompt and tools: what the first request read when it found them cached, else its whole prefix.
      const system = index === 0 ? (read > 0 ? Math.min(read, prefix) : prefix) : segments[0]!.tokens;
      segments = [{ hash: "system and tools", tokens: system, blocks: 1 }];
      if (prefix > system) segments.push({ hash: `${chain}:${index}`, tokens: prefix - system, blocks: 1 });
    } else if (prefix > sent) {
      segments = [
        ...segments,
        { hash: `${chain}:${index}`, tokens: prefix - sent, blocks: Math.max(1, since.length) },
      ];
    }
    sent = prefix;
    previousPoint = point;
    previousCached = prefix;
    // The transcript records a reply when its last block arrives, a few seconds before the response ends and
    // the provider refreshes what the request used.
    previousReply = replyTime(messages, point) + RESPONSE_END_SECONDS * 1000;
    const bill = cache.bill({
      at,
      refreshedAt: previousReply,
      segments: [...segments, { hash: `tail:${index}`, tokens: tail, blocks: 1 }],
      breakpoints: [0, segments.length - 1],
      longTtl,
    });
    if (index === 0 || expired) continue;
    compared++;
    recorded.read += read;
    recorded.write += write;
    modelled.read += bill.cacheRead;
    modelled.write += bill.cacheWrite;
  }
  return { requests: compared, recorded, modelled, longTtl, clientRewrites };
}
