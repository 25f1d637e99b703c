/** A token bucket's settings: a sustained rate, the burst it may absorb and how long a request may queue. */
export interface RateLimit {
  /** Sustained requests per second. */
  readonly requestsPerSecond: number;
  /** Bucket size: how many requests may arrive at once. */
  readonly burst: number;
  /**
   * How long a request over the rate may wait for its turn before it is refused (429), in milliseconds. Default 0:
   * refused at once. Agents send bursts; a short queue lets them through instead of making their SDKs give up.
   */
  readonly maxWaitMs?: number;
}

/**
 * The outcome of `take`: allowed (after `waitMs`, its turn in the queue; 0 when a token was there), or refused
 * with the seconds until a request would be allowed.
 */
export type RateDecision =
  | { readonly allowed: true; readonly waitMs: number }
  | { readonly allowed: false; readonly retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  updatedAt: number;
  /** The limit of the bucket's latest take (keys may have limits of their own). */
  limit: RateLimit;
}

/**
 * Per-key token buckets. Buckets refill continuously; idle ones are forgotten once full, so memory stays
 * proportional to the keys active in the last few seconds. Each take names the limit of its bucket, so keys with
 * limits of their own share one limiter.
 *
 * @example
 * const limiter = new RateLimiter();
 * if (!limiter.take(keyId, { requestsPerSecond: 50, burst: 100 }).allowed) return tooManyRequests();
 */
export class RateLimiter {
  readonly #buckets = new Map<string, Bucket>();
  readonly #now: () => number;
  #lastSweep = 0;

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** Takes one token from `key`'s bucket, which follows `limit` (its latest one when the limit changes). */
  take(key: string, limit: RateLimit): RateDecision {
    const now = this.#now();
    this.#sweep(now);
    const bucket = this.#buckets.get(key) ?? { tokens: limit.burst, updatedAt: now, limit };
    bucket.tokens = Math.min(
      limit.burst,
      bucket.tokens + ((now - bucket.updatedAt) / 1000) * limit.requestsPerSecond,
    );
    bucket.updatedAt = now;
    bucket.limit = limit;
    this.#buckets.set(key, bucket);
    // A request may borrow the tokens of the next `maxWaitMs` (it then waits until its token has refilled).
    const queue = ((limit.maxWaitMs ?? 0) / 1000) * limit.requestsPerSecond;
    if (bucket.tokens - 1 >= -queue) {
      bucket.tokens -= 1;
      const waitMs = bucket.tokens >= 0 ? 0 : (-bucket.tokens / limit.requestsPerSecond) * 1000;
      return { allowed: true, waitMs };
    }
    const seconds = (1 - bucket.tokens - queue) / limit.requestsPerSecond;
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(seconds)) };
  }

  /**
   * Puts back the token an allowed `take` just took from `key`'s bucket: the request was refused by another
   * limit, so it should not count against this one.
   */
  giveBack(key: string): void {
    const bucket = this.#buckets.get(key);
    if (bucket !== undefined) bucket.tokens = Math.min(bucket.limit.burst, bucket.tokens + 1);
  }

  #sweep(now: number): void {
    if (now - this.#lastSweep < 10_000) return;
    this.#lastSweep = now;
    for (const [key, bucket] of this.#buckets) {
      const refill = (bucket.limit.burst / bucket.limit.requestsPerSecond) * 1000;
      if (now - bucket.updatedAt > refill) this.#buckets.delete(key);
    }
  }
}
