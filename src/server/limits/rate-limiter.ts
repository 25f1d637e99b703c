/** A token bucket's settings: a sustained rate and the burst it may absorb. */
export interface RateLimit {
  /** Sustained requests per second. */
  readonly requestsPerSecond: number;
  /** Bucket size: how many requests may arrive at once. */
  readonly burst: number;
}

/** The outcome of `take`: allowed, or refused with the seconds until a request would be allowed. */
export type RateDecision =
  { readonly allowed: true } | { readonly allowed: false; readonly retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/**
 * Per-key token buckets. Buckets refill continuously; idle ones are forgotten once full, so memory stays
 * proportional to the keys active in the last few seconds.
 *
 * @example
 * const limiter = new RateLimiter({ requestsPerSecond: 50, burst: 100 });
 * if (!limiter.take(keyId).allowed) return tooManyRequests();
 */
export class RateLimiter {
  readonly limit: RateLimit;
  readonly #buckets = new Map<string, Bucket>();
  readonly #now: () => number;
  #lastSweep = 0;

  constructor(limit: RateLimit, now: () => number = () => performance.now()) {
    this.limit = limit;
    this.#now = now;
  }

  /** Takes one token from `key`'s bucket. */
  take(key: string): RateDecision {
    const now = this.#now();
    this.#sweep(now);
    const bucket = this.#buckets.get(key) ?? { tokens: this.limit.burst, updatedAt: now };
    bucket.tokens = Math.min(
      this.limit.burst,
      bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.limit.requestsPerSecond,
    );
    bucket.updatedAt = now;
    this.#buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    const seconds = (1 - bucket.tokens) / this.limit.requestsPerSecond;
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(seconds)) };
  }

  #sweep(now: number): void {
    if (now - this.#lastSweep < 10_000) return;
    this.#lastSweep = now;
    const refill = (this.limit.burst / this.limit.requestsPerSecond) * 1000;
    for (const [key, bucket] of this.#buckets) if (now - bucket.updatedAt > refill) this.#buckets.delete(key);
  }
}
