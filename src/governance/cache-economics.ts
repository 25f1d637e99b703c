import type { CacheProfile, CacheProvider } from "../pricing/cache-profile.ts";

/** Provider cache prices relative to the uncached input price (a `CacheProfile`'s read and write). */
export type CachePricing = Pick<CacheProfile, "read" | "write">;

const pricingByProvider: Readonly<Record<string, CacheProvider>> = {
  anthropic: "anthropic",
  openai: "openai",
  google: "gemini",
};

/**
 * The cache profile name of a model's provider (as the model registry names it), or undefined when ctxkit does
 * not know its cache — the policy's default applies then.
 *
 * @example
 * pricingForProvider("google") // "gemini"
 */
export function pricingForProvider(provider: string): CacheProvider | undefined {
  return pricingByProvider[provider];
}

/** The figures a checkpoint decision weighs. */
export interface CheckpointCase {
  /** Tokens the checkpoint removes from every later request. */
  readonly savedTokens: number;
  /** Tokens of the new view from the first changed position: re-written once instead of read from cache. */
  readonly rewrittenTokens: number;
  /** How many more requests the session is expected to make. */
  readonly remainingRequests: number;
  /** Requests since the last checkpoint: how long what this one removes has been kept (and read) so far. */
  readonly requestsSinceLast: number;
}

/**
 * True when rewriting the cached prefix pays, and pays best now. It pays when the saving over the coming requests
 * (`savedTokens` read at the cache price each time) beats the one-time cost of writing the rewritten part instead
 * of reading it. It pays best once the batch is worth a rewrite of its own: what a checkpoint removes piles up
 * request by request, and taking every checkpoint as soon as it pays splits the same saving into many rewrites.
 * The batch that costs least per request is the economic order quantity (a setup cost against a holding cost):
 * a checkpoint is due when keeping what it removes has cost, since the last one, as much as the rewrite — half
 * the batch on average, read on every request since (`requestsSinceLast`). A rewrite that costs nothing (the
 * cache expired) is due at once.
 *
 * @example
 * checkpointPays({ savedTokens: 30_000, rewrittenTokens: 50_000, remainingRequests: 40, requestsSinceLast: 20 }, cachePricing.anthropic)
 */
export function checkpointPays(checkpoint: CheckpointCase, pricing: CachePricing): boolean {
  const { saving, cost, held } = weighed(checkpoint, pricing);
  return saving > cost && held >= cost;
}

/** A checkpoint's saving over the remaining requests, its rewrite's cost, and what keeping its batch has cost. */
function weighed(checkpoint: CheckpointCase, pricing: CachePricing) {
  return {
    saving: checkpoint.savedTokens * pricing.read * checkpoint.remainingRequests,
    cost: checkpoint.rewrittenTokens * (pricing.write - pricing.read),
    held: (checkpoint.savedTokens / 2) * pricing.read * checkpoint.requestsSinceLast,
  };
}

/**
 * Requests until a checkpoint that pays but is not yet due (`checkpointPays`: the batch not yet worth its rewrite)
 * becomes due, were it the same checkpoint then: what it removes piles up about steadily, so what keeping it has
 * cost grows with the square of the requests since the last checkpoint. 0 when it is due now or does not pay at
 * all (then nothing says when it will).
 *
 * @example
 * requestsUntilDue({ savedTokens: 6_000, rewrittenTokens: 20_000, remainingRequests: 60, requestsSinceLast: 10 }, cachePricing.anthropic) // 18
 */
export function requestsUntilDue(checkpoint: CheckpointCase, pricing: CachePricing): number {
  const { saving, cost, held } = weighed(checkpoint, pricing);
  if (saving <= cost || held >= cost || held <= 0) return 0;
  return Math.ceil(checkpoint.requestsSinceLast * (Math.sqrt(cost / held) - 1));
}

/**
 * Expected remaining requests: a session that has made N requests is likely to make about N more (Lindy); we
 * count on half of that, because a checkpoint taken too early costs its whole rewrite while one taken a little
 * late only forgoes a few cheap cached reads. A small floor (a young session has not proven it will last) and
 * a ceiling.
 */
export function expectedRemainingRequests(requestsSoFar: number): number {
  return Math.min(200, Math.max(5, requestsSoFar / 2));
}
