/**
 * What providers bill: model prices, and the prompt-cache model (per-provider cache profiles and a simulator of
 * which prefix a request reads from or writes to the cache).
 */
export * from "./model-prices.ts";
export * from "./cache-minimums.ts";
export {
  cacheProfileFor,
  cacheProfiles,
  resolveCacheProfile,
  type CacheProfile,
  type CacheProfileInput,
  type CacheProvider,
} from "./cache-profile.ts";
export { PromptCache, type CacheBill, type CacheRequest, type PayloadSegment } from "./prompt-cache.ts";
export { fixedSegment, messageSegment } from "./payload-segments.ts";
