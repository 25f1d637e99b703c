import { describe, expect, it } from "vitest";
import { RateLimiter } from "./rate-limiter.ts";

describe("RateLimiter", () => {
  it("allows a burst, then refills at the sustained rate, per key", () => {
    let now = 0;
    const limit = { requestsPerSecond: 2, burst: 3 };
    const limiter = new RateLimiter(() => now);
    expect([1, 2, 3, 4].map(() => limiter.take("a", limit).allowed)).toEqual([true, true, true, false]);
    expect(limiter.take("b", limit)).toEqual({ allowed: true, waitMs: 0 });
    const refused = limiter.take("a", limit);
    expect(refused).toEqual({ allowed: false, retryAfterSeconds: 1 });
    now += 500; // one token back at 2 per second
    expect(limiter.take("a", limit).allowed).toBe(true);
    expect(limiter.take("a", limit).allowed).toBe(false);
    now += 60_000; // never more than the burst
    expect([1, 2, 3, 4].map(() => limiter.take("a", limit).allowed)).toEqual([true, true, true, false]);
  });

  it("says how long to wait when the rate is slow", () => {
    const limit = { requestsPerSecond: 0.1, burst: 1 };
    const limiter = new RateLimiter(() => 0);
    limiter.take("a", limit);
    expect(limiter.take("a", limit)).toEqual({ allowed: false, retryAfterSeconds: 10 });
  });

  it("queues a request over the rate for up to maxWaitMs, in order, then refuses", () => {
    let now = 0;
    const limit = { requestsPerSecond: 10, burst: 2, maxWaitMs: 300 };
    const limiter = new RateLimiter(() => now);
    const waits = [1, 2, 3, 4, 5].map(() => limiter.take("a", limit));
    // Two from the burst at once, then one every 100 ms for the next 300 ms.
    expect(waits.slice(0, 4)).toEqual([
      { allowed: true, waitMs: 0 },
      { allowed: true, waitMs: 0 },
      { allowed: true, waitMs: 100 },
      { allowed: true, waitMs: 200 },
    ]);
    expect(waits[4]).toMatchObject({ allowed: true });
    expect((waits[4] as { waitMs: number }).waitMs).toBeCloseTo(300);
    expect(limiter.take("a", limit)).toEqual({ allowed: false, retryAfterSeconds: 1 });
    now += 1_000;
    expect(limiter.take("a", limit)).toEqual({ allowed: true, waitMs: 0 });
  });

  it("keeps each bucket to the limit it is taken with, and gives back a token a request did not use", () => {
    let now = 0;
    const limiter = new RateLimiter(() => now);
    const tight = { requestsPerSecond: 1, burst: 1 };
    const loose = { requestsPerSecond: 100, burst: 5 };
    expect([1, 2].map(() => limiter.take("tight", tight).allowed)).toEqual([true, false]);
    expect([1, 2, 3, 4, 5, 6].map(() => limiter.take("loose", loose).allowed)).toEqual([
      true,
      true,
      true,
      true,
      true,
      false,
    ]);
    limiter.giveBack("tight");
    expect(limiter.take("tight", tight).allowed).toBe(true);
    limiter.giveBack("tight");
    limiter.giveBack("tight"); // never beyond the burst
    expect([1, 2].map(() => limiter.take("tight", tight).allowed)).toEqual([true, false]);
    now += 60_000; // swept while idle, then a fresh full bucket
    expect(limiter.take("tight", tight).allowed).toBe(true);
  });
});
