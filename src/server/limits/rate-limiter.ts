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
    // A request may borrow the tokens of the next `maxWaitMs` (it then waits until its token has refilled).
    const queue = ((this.limit.maxWaitMs ?? 0) / 1000) * this.limit.requestsPerSecond;
    if (bucket.tokens - 1 >= -queue) {
      bucket.tokens -= 1;
      const waitMs = bucket.tokens >= 0 ? 0 : (-bucket.tokens / this.limit.requestsPerSecond) * 1000;
      return { allowed: true, waitMs };
    }
    const seconds = (1 - bucket.tokens - queue) / this.limit.requestsPerSecond;
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(seconds)) };
  }

  #sweep(now: number): void {
    if (now - this.#lastSweep < 10_000) return;
    this.#lastSweep = now;
    const refill = (this.limit.burst / this.limit.requestsPerSecond) * 1000;
    for (const [key, bucket] of this.#buckets) if (now - bucket.updatedAt > refill) this.#buckets.delete(key);
  }
}
