import { z } from "zod";
import { validate } from "../model/schemas.ts";
import { defaultModelRegistry } from "../tokens/model-registry.ts";
import { anthropicMinimumCacheableTokens } from "./cache-minimums.ts";
import { DEFAULT_PRICES, findPrice, type PriceTable } from "./model-prices.ts";

/** The providers whose prompt caches ctxkit models, and `none` (no cache). */
export type CacheProvider = "anthropic" | "openai" | "gemini" | "none";

/**
 * How one provider's prompt cache bills a model, in units of that model's uncached input price. Used by the
 * replay, the bench, governance's checkpoint arithmetic and the inspector, so all price a request the same way.
 */
export interface CacheProfile {
  readonly provider: CacheProvider;
  /** The model the prices are for, when known. */
  readonly model?: string;
  /** A token read from the cache. */
  readonly read: number;
  /** A token written to the cache (Anthropic's default 5-minute entries; OpenAI and Gemini do not charge extra). */
  readonly write: number;
  /** A token written to Anthropic's 1-hour cache. */
  readonly writeLong: number;
  /** An output token. */
  readonly output: number;
  /** The shortest prefix the provider caches, in tokens. */
  readonly minTokens: number;
  /** How long an entry lives after its last use, in milliseconds. */
  readonly ttlMs: number;
  /** Anthropic's 1-hour entries. */
  readonly longTtlMs: number;
  /** Automatic caches (OpenAI) serve a prefix rounded down to this many tokens; 1 where there is no rounding. */
  readonly blockTokens: number;
  /**
   * Anthropic: how many content blocks before a breakpoint the provider looks for an earlier cached prefix. 0
   * for automatic caches, which match any prefix.
   */
  readonly lookbackBlocks: number;
}

const MINUTE = 60_000;

/**
 * Reference profiles per provider. Sources (provider documentation, 2025–2026):
 * - Anthropic prompt caching: reads 0.1×, writes 1.25× (5-minute TTL, refreshed each time an entry is read) or
 *   2× (1-hour TTL); only prefixes ending at a `cache_control` breakpoint are written, at most 4 per request; a
 *   breakpoint also finds a prefix cached up to ~20 blocks before it; minimum 1,024 tokens on Sonnet 4/4.5
 *   (see `anthropicMinimumCacheableTokens` for the others). Output costs 5× input on every current Claude model.
 * - OpenAI prompt caching: automatic from 1,024 tokens, in 128-token increments; entries are evicted after 5–10
 *   minutes of inactivity (up to an hour off-peak; 24 h with extended retention) — we count 5. Reads at the
 *   model's cached price: 0.1× on the GPT-5 family, 0.25× on GPT-4.1, 0.5× on GPT-4o; no write premium.
 * - Gemini implicit caching: automatic from 1,024 (Flash) / 2,048 (Pro) tokens, cached tokens at 0.25× on Gemini
 *   2.5 and 0.1× on Gemini 3; the lifetime is not documented — we count 5 minutes like OpenAI.
 */
export const cacheProfiles: Readonly<Record<CacheProvider, CacheProfile>> = Object.freeze({
  anthropic: {
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    read: 0.1,
    write: 1.25,
    writeLong: 2,
    output: 5,
    minTokens: 1_024,
    ttlMs: 5 * MINUTE,
    longTtlMs: 60 * MINUTE,
    blockTokens: 1,
    lookbackBlocks: 20,
  },
  openai: {
    provider: "openai",
    model: "gpt-5",
    read: 0.1,
    write: 1,
    writeLong: 1,
    output: 8,
    minTokens: 1_024,
    ttlMs: 5 * MINUTE,
    longTtlMs: 5 * MINUTE,
    blockTokens: 128,
    lookbackBlocks: 0,
  },
  gemini: {
    provider: "gemini",
    model: "gemini-2.5-pro",
    read: 0.25,
    write: 1,
    writeLong: 1,
    output: 8,
    minTokens: 2_048,
    ttlMs: 5 * MINUTE,
    longTtlMs: 5 * MINUTE,
    blockTokens: 1,
    lookbackBlocks: 0,
  },
  none: {
    provider: "none",
    read: 1,
    write: 1,
    writeLong: 1,
    output: 1,
    minTokens: Number.POSITIVE_INFINITY,
    ttlMs: 0,
    longTtlMs: 0,
    blockTokens: 1,
    lookbackBlocks: 0,
  },
});

/**
 * Gemini's minimum prompt for implicit caching (ai.google.dev/gemini-api/docs/caching, October 2026): 2,048
 * tokens for the 2.5 models, 4,096 for Gemini 3 and later.
 */
function geminiMinimumCacheableTokens(model: string): number {
  const major = Number(/gemini-(\d+)/.exec(model)?.[1] ?? 2);
  return major >= 3 ? 4_096 : 2_048;
}

/**
 * The cache profile of a model: its provider's reference profile with the model's own cached-read and output
 * ratios from the price table, and its minimum cacheable length. A model the registry does not know gets the
 * `none` profile unless `provider` names one; `none` keeps the model's output ratio when the table knows it.
 *
 * @example
 * cacheProfileFor("gpt-4.1").read; // 0.25
 * cacheProfileFor("claude-opus-4-6").minTokens; // 4096
 */
export function cacheProfileFor(
  model: string,
  options: { provider?: CacheProvider; prices?: PriceTable } = {},
): CacheProfile {
  const provider = options.provider ?? providerOf(model);
  const base = cacheProfiles[provider];
  const price = findPrice(options.prices ?? DEFAULT_PRICES, model);
  // No cache, but output (a summary, a re-read's answer) still costs what the model charges for it.
  if (provider === "none")
    return price !== undefined && price.input > 0
      ? { ...base, model, output: price.output / price.input }
      : base;
  const name = model.toLowerCase();
  return {
    ...base,
    model,
    ...(price !== undefined &&
      price.input > 0 && {
        output: price.output / price.input,
        ...(price.cacheRead !== undefined && { read: price.cacheRead / price.input }),
      }),
    ...(provider === "anthropic" && { minTokens: anthropicMinimumCacheableTokens(name) }),
    ...(provider === "gemini" && { minTokens: geminiMinimumCacheableTokens(name) }),
  };
}

function providerOf(model: string): CacheProvider {
  const prefix = /^([a-z-]+):/.exec(model)?.[1];
  const provider = prefix ?? defaultModelRegistry.lookup(model)?.provider;
  if (provider === "anthropic" || provider === "openai") return provider;
  if (provider === "google" || provider === "gemini") return "gemini";
  return "none";
}

const profileSchema = z.union([
  z.enum(["anthropic", "openai", "gemini", "none"]),
  z.object({
    model: z.string().min(1),
    provider: z.enum(["anthropic", "openai", "gemini", "none"]).optional(),
  }),
]);

/** A cache profile as users name it: a provider (its reference model) or a model. */
export type CacheProfileInput = CacheProvider | { model: string; provider?: CacheProvider };

/**
 * Resolves what a user named — a provider or a model — to a profile (validated).
 *
 * @example
 * resolveCacheProfile("openai").read; // 0.1 (GPT-5)
 * resolveCacheProfile({ model: "gpt-4o" }).read; // 0.5
 */
export function resolveCacheProfile(input: CacheProfileInput): CacheProfile {
  const checked = validate(profileSchema, input, "cache profile");
  if (typeof checked === "string") return cacheProfiles[checked];
  return cacheProfileFor(checked.model, checked.provider === undefined ? {} : { provider: checked.provider });
}
