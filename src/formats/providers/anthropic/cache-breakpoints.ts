/**
 * Where a request's Anthropic `cache_control` breakpoints go. Anthropic caches a prompt only up to a marked
 * block, at most four per request (a fifth is a 400 error), and reads a cached prefix when one of this request's
 * breakpoints sits on it or up to ~20 blocks after it. This module decides the positions; the appliers
 * (`withAnthropicBreakpoints` for Messages payloads, `withAiSdkBreakpoints` for AI SDK prompts) write them, and
 * the replay prices exactly these positions.
 */

/** Anthropic's limit of `cache_control` breakpoints in one request. */
export const MAX_ANTHROPIC_BREAKPOINTS = 4;

/**
 * How long a cache entry lives: `5m` (the default; refreshed on every hit) or `1h` (written at 2× the input price
 * instead of 1.25×). Anthropic requires the longer TTLs to come first in request order.
 */
export type CacheTtl = "5m" | "1h";

/** A place a breakpoint can sit, in request order: the tool definitions, the system prompt, a message. */
export type BreakpointPosition =
  { readonly at: "tools" } | { readonly at: "system" } | { readonly at: "message"; readonly index: number };

/** A breakpoint: where it sits and how long what it caches lives. */
export interface CacheBreakpoint {
  readonly position: BreakpointPosition;
  readonly ttl: CacheTtl;
}

/** What `planAnthropicBreakpoints` needs to know about a request. */
export interface BreakpointPlanInput {
  /** Number of messages (a message is one place a breakpoint can sit: its last stable block). */
  readonly messageCount: number;
  /** Index of the newest assistant message, or -1 when there is none. */
  readonly newestAssistantIndex: number;
  /**
   * Trailing messages sent with this request only (ctxkit's budget-exit notice): they are not part of the next
   * request's prefix, so no breakpoint goes on them. Default 0.
   */
  readonly ephemeralTail?: number;
  readonly hasTools: boolean;
  readonly hasSystem: boolean;
  /**
   * Message indices worth a breakpoint besides the newest messages, oldest first: the governor's cache anchors
   * (`GovernedRequest.cacheAnchors`), the prefixes its next rewrite of history will leave as they are.
   */
  readonly anchors?: readonly number[];
  /**
   * Tokens of the prompt from its start through `position` (tools, then system, then messages). It is only
   * compared with `minTokens`, so a caller may stop counting once the prefix has reached it.
   */
  readonly tokensThrough: (position: BreakpointPosition) => number;
  /** Breakpoints the caller already set, one entry per marker; they are kept and count towards the four. */
  readonly existing?: readonly CacheBreakpoint[];
  /** The model's minimum cacheable prefix (`anthropicMinimumCacheableTokens`); shorter prefixes get none. */
  readonly minTokens?: number;
  /** TTL of the breakpoints placed here. Default `5m`. */
  readonly ttl?: CacheTtl;
}

const ORDER = { tools: 0, system: 1, message: 2 } as const;
const TTL_RANK: Readonly<Record<CacheTtl, number>> = { "5m": 1, "1h": 2 };

/**
 * Orders two positions as Anthropic reads a request: tools, then system, then messages by index.
 *
 * @example
 * comparePositions({ at: "system" }, { at: "message", index: 0 }); // < 0
 */
export function comparePositions(a: BreakpointPosition, b: BreakpointPosition): number {
  const byPlace = ORDER[a.at] - ORDER[b.at];
  if (byPlace !== 0 || a.at !== "message" || b.at !== "message") return byPlace;
  return a.index - b.index;
}

function samePosition(a: BreakpointPosition, b: BreakpointPosition): boolean {
  return comparePositions(a, b) === 0;
}

/**
 * The TTL a new breakpoint at `position` may take so the request keeps longer TTLs first: `wanted`, moved up to
 * the longest TTL placed after it or down to the shortest placed before it; undefined when the caller's own
 * markers already leave no valid TTL there.
 */
function fittingTtl(
  position: BreakpointPosition,
  wanted: CacheTtl,
  existing: readonly CacheBreakpoint[],
): CacheTtl | undefined {
  let floor = TTL_RANK["5m"];
  let ceiling = TTL_RANK["1h"];
  for (const marker of existing) {
    const rank = TTL_RANK[marker.ttl];
    if (comparePositions(marker.position, position) < 0) ceiling = Math.min(ceiling, rank);
    else floor = Math.max(floor, rank);
  }
  if (floor > ceiling) return undefined;
  const rank = Math.min(Math.max(TTL_RANK[wanted], floor), ceiling);
  return rank === TTL_RANK["1h"] ? "1h" : "5m";
}

/**
 * Plans the `cache_control` breakpoints of one Anthropic request and returns the ones to add, in request order.
 * Candidates, most valuable first: the newest stable message (what the next request reads), the system prompt
 * (or the last tool definition when there is no system prompt; later when the caller marked either), the
 * caller's `anchors`, the message before
 * the newest assistant message (the newest message of the previous request in an agent loop, which is what
 * that request wrote: this request reads it there), the last tool definition. A candidate
 * is skipped when the caller already marked that position, when its prefix is shorter than `minTokens` (it
 * would cache nothing and waste one of the four), or when no TTL there keeps the caller's markers in order.
 * Together with `existing` there are never more than four; a `1h` breakpoint never follows a `5m` one.
 *
 * @example
 * planAnthropicBreakpoints({
 *   messageCount: 5, newestAssistantIndex: 3, hasTools: true, hasSystem: true,
 *   tokensThrough: () => 5_000, minTokens: 1_024,
 * });
 * // tools, system, message 2, message 4 — each { ttl: "5m" }
 */
export function planAnthropicBreakpoints(input: BreakpointPlanInput): CacheBreakpoint[] {
  const existing = input.existing ?? [];
  const free = MAX_ANTHROPIC_BREAKPOINTS - existing.length;
  if (free <= 0) return [];
  const newestStable = input.messageCount - 1 - Math.max(0, input.ephemeralTail ?? 0);
  const previousNewest = input.newestAssistantIndex - 1;
  // The fixed prefix early (a breakpoint on the system prompt caches the tools before it too), unless the caller
  // marked part of it: every rewrite of history keeps it. Then the governor's anchors, then the previous
  // request's newest message (the newest one's lookback usually reaches it), then the rest of the fixed prefix.
  const fixed: BreakpointPosition[] = [];
  if (input.hasSystem) fixed.push({ at: "system" });
  if (input.hasTools) fixed.push({ at: "tools" });
  const early = existing.some((marker) => marker.position.at !== "message") ? 0 : 1;
  const candidates: BreakpointPosition[] = [];
  if (newestStable >= 0) candidates.push({ at: "message", index: newestStable });
  candidates.push(...fixed.slice(0, early));
  for (const anchor of input.anchors ?? [])
    if (
      Number.isInteger(anchor) &&
      anchor >= 0 &&
      anchor < newestStable &&
      anchor !== previousNewest &&
      !candidates.some((candidate) => candidate.at === "message" && candidate.index === anchor)
    )
      candidates.push({ at: "message", index: anchor });
  if (previousNewest >= 0 && previousNewest < newestStable)
    candidates.push({ at: "message", index: previousNewest });
  candidates.push(...fixed.slice(early));

  const minTokens = input.minTokens ?? 0;
  const wanted = input.ttl ?? "5m";
  const chosen: CacheBreakpoint[] = [];
  for (const position of candidates) {
    if (chosen.length === free) break;
    if (existing.some((marker) => samePosition(marker.position, position))) continue;
    if (minTokens > 0 && input.tokensThrough(position) < minTokens) continue;
    const ttl = fittingTtl(position, wanted, existing);
    if (ttl !== undefined) chosen.push({ position, ttl });
  }
  return chosen.sort((a, b) => comparePositions(a.position, b.position));
}
