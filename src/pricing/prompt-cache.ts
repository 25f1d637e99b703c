import type { CacheProfile } from "./cache-profile.ts";
import { chainHash } from "./payload-segments.ts";

/** One part of a payload as a prompt cache sees it: the system prompt with the tools, or one message. */
export interface PayloadSegment {
  /** Identity of the content: equal content, equal hash (see `messageSegment`). */
  readonly hash: string;
  readonly tokens: number;
  /** Content blocks in the segment (Anthropic's lookback counts blocks). */
  readonly blocks: number;
}

/** One request to price. */
export interface CacheRequest {
  /** When it was sent, in milliseconds since the epoch (expiry is measured between requests). */
  readonly at: number;
  /** The payload in order: system prompt and tools first, then the messages. */
  readonly segments: readonly PayloadSegment[];
  /**
   * Indices of the segments whose last block carries a `cache_control` breakpoint (Anthropic only; automatic
   * caches ignore it). Without breakpoints an Anthropic request is never cached.
   */
  readonly breakpoints?: readonly number[];
  /** Anthropic: write 1-hour entries instead of 5-minute ones. */
  readonly longTtl?: boolean;
  /**
   * Leading segments the caller knows are the previous request's, unchanged (a payload that only grew): they
   * are not compared again, so a long payload costs what it added.
   */
  readonly unchanged?: number;
  /**
   * When the provider finished with the request (its reply arrived), from which the entries it used or wrote
   * live for their TTL. Default `at`.
   */
  readonly refreshedAt?: number;
}

/** How a provider bills one request's input. */
export interface CacheBill {
  /** All input tokens of the request. */
  readonly tokens: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  /** Tokens neither read from nor written to the cache. */
  readonly uncached: number;
  /** The input's cost in units of the uncached input price. */
  readonly costUnits: number;
}

interface AnthropicEntry {
  expiresAt: number;
}

interface AutomaticEntry {
  /** The chain arrays grow in place while payloads only grow: this entry's payload is their first `length`. */
  readonly chain: readonly string[];
  readonly through: readonly number[];
  readonly length: number;
  lastUsed: number;
}

/** Automatic caches: prefixes of this many recent live requests are searched (older ones are shadowed). */
const RECENT_REQUESTS = 32;

/**
 * Simulates one provider's prompt cache across the requests of one session, to price each request as the
 * provider bills it (DESIGN.md, "Cost model"):
 * - **Anthropic**: only prefixes ending at a breakpoint are written (tokens up to the last breakpoint that were
 *   not read are billed as cache writes; tokens after it as plain input). A breakpoint reads the longest live
 *   entry ending at it or up to `lookbackBlocks` blocks before it; a hit refreshes the entry's TTL. Prefixes
 *   shorter than the model's minimum are never written.
 * - **OpenAI / Gemini** (automatic): every request's prefixes are cached; a request reads the longest prefix it
 *   shares with a live earlier request (rounded down to `blockTokens`, from `minTokens`), and refreshes it.
 * Entries expire `ttlMs` after their last use. Work per request is proportional to the payload's new segments
 * plus a binary search per recent request: the prefix chain of unchanged leading segments is reused.
 *
 * @example
 * const cache = new PromptCache(cacheProfiles.anthropic);
 * const bill = cache.bill({ at: Date.now(), segments, breakpoints: [0, segments.length - 1] });
 */
export class PromptCache {
  readonly profile: CacheProfile;
  /** The previous payload's segments (a copy: callers may grow their array in place). */
  #segments: PayloadSegment[] = [];
  #chain: string[] = [];
  #through: number[] = [];
  #blocks: number[] = [];
  readonly #anthropic = new Map<string, AnthropicEntry>();
  #automatic: AutomaticEntry[] = [];
  #billed = 0;

  constructor(profile: CacheProfile) {
    this.profile = profile;
  }

  /** Prices `request` and updates the cache as the provider would. */
  bill(request: CacheRequest): CacheBill {
    this.#extendChain(request.segments, request.unchanged ?? 0);
    const tokens = this.#through.at(-1) ?? 0;
    const { provider } = this.profile;
    if (provider === "none" || tokens === 0)
      return { tokens, cacheRead: 0, cacheWrite: 0, uncached: tokens, costUnits: tokens };
    if (++this.#billed % 64 === 0) this.#forgetExpired(request.at);
    return provider === "anthropic"
      ? this.#billAnthropic(request, tokens)
      : this.#billAutomatic(request, tokens);
  }

  #billAnthropic(request: CacheRequest, tokens: number): CacheBill {
    const { profile } = this;
    const ttl = request.longTtl === true ? profile.longTtlMs : profile.ttlMs;
    const expiresAt = Math.max(request.at, request.refreshedAt ?? request.at) + ttl;
    const breakpoints = [...new Set(request.breakpoints ?? [])]
      .filter((index) => index >= 0 && index < this.#chain.length)
      .sort((a, b) => a - b);
    let hit = -1;
    for (const breakpoint of breakpoints) {
      const found = this.#lookBack(breakpoint, request.at);
      if (found < 0) continue;
      const entry = this.#anthropic.get(this.#chain[found]!)!;
      entry.expiresAt = Math.max(entry.expiresAt, expiresAt);
      hit = Math.max(hit, found);
    }
    const cacheRead = hit < 0 ? 0 : this.#through[hit]!;
    let written = cacheRead;
    for (const breakpoint of breakpoints) {
      const through = this.#through[breakpoint]!;
      if (through < profile.minTokens) continue;
      const entry = this.#anthropic.get(this.#chain[breakpoint]!);
      if (entry !== undefined) entry.expiresAt = Math.max(entry.expiresAt, expiresAt);
      else this.#anthropic.set(this.#chain[breakpoint]!, { expiresAt });
      written = Math.max(written, through);
    }
    const cacheWrite = written - cacheRead;
    const uncached = tokens - written;
    const writePrice = request.longTtl === true ? profile.writeLong : profile.write;
    return {
      tokens,
      cacheRead,
      cacheWrite,
      uncached,
      costUnits: cacheRead * profile.read + cacheWrite * writePrice + uncached,
    };
  }

  /** The segment index of the longest live entry at `breakpoint` or within the lookback before it; -1 if none. */
  #lookBack(breakpoint: number, at: number): number {
    const limit = this.#blocks[breakpoint]! - this.profile.lookbackBlocks;
    for (let index = breakpoint; index >= 0 && this.#blocks[index]! >= limit; index--) {
      const entry = this.#anthropic.get(this.#chain[index]!);
      if (entry !== undefined && entry.expiresAt >= at) return index;
    }
    return -1;
  }

  #billAutomatic(request: CacheRequest, tokens: number): CacheBill {
    const { profile } = this;
    let best = 0;
    let bestEntry: AutomaticEntry | undefined;
    for (const entry of this.#automatic) {
      if (entry.lastUsed + profile.ttlMs < request.at) continue;
      const shared = sharedPrefix(entry.chain, entry.length, this.#chain);
      const through = shared === 0 ? 0 : Math.min(entry.through[shared - 1]!, this.#through[shared - 1]!);
      if (through > best) {
        best = through;
        bestEntry = entry;
      }
    }
    const rounded = Math.floor(best / profile.blockTokens) * profile.blockTokens;
    const cacheRead = rounded >= profile.minTokens ? rounded : 0;
    const lastUsed = Math.max(request.at, request.refreshedAt ?? request.at);
    if (cacheRead > 0 && bestEntry !== undefined) bestEntry.lastUsed = lastUsed;
    this.#automatic.push({
      chain: this.#chain,
      through: this.#through,
      length: this.#chain.length,
      lastUsed,
    });
    if (this.#automatic.length > RECENT_REQUESTS) this.#automatic.shift();
    const cacheWrite = tokens - cacheRead;
    return {
      tokens,
      cacheRead,
      cacheWrite,
      uncached: 0,
      costUnits: cacheRead * profile.read + cacheWrite * profile.write,
    };
  }

  /** Brings the prefix chain up to `segments`, reusing the leading segments that did not change. */
  #extendChain(segments: readonly PayloadSegment[], unchanged: number): void {
    const previous = this.#segments;
    let same = Math.max(0, Math.min(unchanged, segments.length, previous.length));
    while (same < segments.length && same < previous.length && segments[same] === previous[same]) same++;
    // Entries keep references to the arrays (with their length): grow them in place while the payload only
    // grows at its end (O(new)), copy the shared part when it changed (a checkpoint).
    const grows = same === previous.length;
    if (grows) for (let index = same; index < segments.length; index++) previous.push(segments[index]!);
    else this.#segments = segments.slice();
    const chain = grows ? this.#chain : this.#chain.slice(0, same);
    const through = grows ? this.#through : this.#through.slice(0, same);
    const blocks = grows ? this.#blocks : this.#blocks.slice(0, same);
    for (let index = same; index < segments.length; index++) {
      const segment = segments[index]!;
      chain.push(chainHash(index === 0 ? "" : chain[index - 1]!, segment.hash));
      through.push((index === 0 ? 0 : through[index - 1]!) + segment.tokens);
      blocks.push((index === 0 ? 0 : blocks[index - 1]!) + Math.max(1, segment.blocks));
    }
    this.#chain = chain;
    this.#through = through;
    this.#blocks = blocks;
  }

  #forgetExpired(at: number): void {
    for (const [key, entry] of this.#anthropic) if (entry.expiresAt < at) this.#anthropic.delete(key);
    this.#automatic = this.#automatic.filter((entry) => entry.lastUsed + this.profile.ttlMs >= at);
  }
}

/** How many leading chain links two payloads share (chains of prefix hashes: equal at i means equal before i). */
function sharedPrefix(a: readonly string[], aLength: number, b: readonly string[]): number {
  let low = 0;
  let high = Math.min(aLength, b.length);
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (a[middle - 1] === b[middle - 1]) low = middle;
    else high = middle - 1;
  }
  return low;
}
