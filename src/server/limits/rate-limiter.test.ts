import { describe, expect, it } from "vitest";
import { RateLimiter } from "./rate-limiter.ts";

describe("RateLimiter", () => {
  it("allows a burst, then refills at the sustained rate, per key", () => {
    let now = 0;
    const limiter = new RateLimiter({ requestsPerSecond: 2, burst: 3 }, () => now);
    expect([1, 2, 3, 4].map(() => limiter.take("a").allowed)).toEqual([true, true, true, false]);
    expect(limiter.take("b")).toEqual({ allowed: true, waitMs: 0 });
    const refused = limiter.take("a");
    expect(refused).toEqual({ allowed: false, retryAfterSeconds: 1 });
    now += 500; // one token back at 2 per second
    expect(limiter.take("a").allowed).toBe(true);
    expect(limiter.take("a").allowed).toBe(false);
    now += 60_000; // never more than the burst
    expect([1, 2, 3, 4].map(() => limiter.take("a").allowed)).toEqual([true, true, true, false]);
  });

  it("says how long to wait when the rate is slow", () => {
    const limiter = new RateLimiter({ requestsPerSecond: 0.1, burst: 1 }, () => 0);
    limiter.take("a");
    expect(limiter.take("a")).toEqual({ allowed: false, retryAfterSeconds: 10 });
  });

  it("queues a request over the rate for up to maxWaitMs, in order, then refuses", () => {
    let now = 0;
    const limiter = new RateLimiter({ requestsPerSecond: 10, burst: 2, maxWaitMs: 300 }, () => now);
    const waits = [1, 2, 3, 4, 5].map(() => limiter.take("a"));
    // Two from the burst at once, then one every 100 ms for the next 300 ms.
    expect(waits.slice(0, 4)).toEqual([
      { allowed: true, waitMs: 0 },
      { allowed: true, waitMs: 0 },
      { allowed: true, waitMs: 100 },
      { allowed: true, waitMs: 200 },
    ]);
    expect(waits[4]).toMatchObject({ allowed: true });
    expect((waits[4] as { waitMs: number }).waitMs).toBeCloseTo(300);
    expect(limiter.take("a")).toEqual({ allowed: false, retryAfterSeconds: 1 });
    now += 1_000;
    expect(limiter.take("a")).toEqual({ allowed: true, waitMs: 0 });
  });
});
