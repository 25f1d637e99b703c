import { describe, expect, it } from "vitest";
import { RateLimiter } from "./rate-limiter.ts";

describe("RateLimiter", () => {
  it("allows a burst, then refills at the sustained rate, per key", () => {
    let now = 0;
    const limiter = new RateLimiter({ requestsPerSecond: 2, burst: 3 }, () => now);
    expect([1, 2, 3, 4].map(() => limiter.take("a").allowed)).toEqual([true, true, true, false]);
    expect(limiter.take("b").allowed).toBe(true);
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
});
