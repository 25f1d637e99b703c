// The fit of the measured reuse rates (bench/support/reuse-rates.ts) that governance ships and that the
// held-out row of the bench refits without each session.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  AGE_BUCKETS,
  emptyReuseCounts,
  fittedReuseRates,
  reuseRates,
  withoutCounts,
  type ReuseCounts,
} from "../../bench/support/reuse-rates.ts";
import { REUSE_AGE_LIMITS } from "../../src/governance/reuse-rates.ts";

/** Counts with one kind's buckets set from `[used, alive]` pairs. */
function countsWith(buckets: readonly (readonly [number, number])[]): ReuseCounts {
  const counts = emptyReuseCounts();
  counts.other.used = buckets.map(([used]) => used);
  counts.other.alive = buckets.map(([, alive]) => alive);
  counts.other.pieces = buckets[0]![1];
  return counts;
}

const bucketCounts = fc.array(
  fc.nat({ max: 500 }).chain((alive) => fc.tuple(fc.nat({ max: alive }), fc.constant(alive))),
  { minLength: AGE_BUCKETS.length, maxLength: AGE_BUCKETS.length },
);

describe("fittedReuseRates", () => {
  it("uses governance's age buckets", () => {
    expect(AGE_BUCKETS.map((bucket) => bucket.to)).toEqual(REUSE_AGE_LIMITS);
    expect(AGE_BUCKETS.slice(1).every((bucket, index) => bucket.from === AGE_BUCKETS[index]!.to + 1)).toBe(
      true,
    );
  });

  it("pools a bucket that measured more than a younger one with it, weighted by the requests each counted", () => {
    // 10% at age 2 over 100 requests, 40% at ages 3–4 over 300: pooled, 130 / 400.
    const counts = countsWith([
      [50, 100],
      [40, 100],
      [10, 100],
      [120, 300],
      [5, 100],
      [0, 100],
      [0, 100],
      [0, 100],
      [0, 100],
      [0, 100],
    ]);
    const fitted = fittedReuseRates(counts).other;
    expect(fitted.slice(0, 5)).toEqual([0.5, 0.4, 0.325, 0.325, 0.05]);
    expect(reuseRates(counts).other[2]).toBe(0.1);
  });

  it("gives a fit that never rises, keeps every use, and leaves rates that already fall untouched", () => {
    fc.assert(
      fc.property(bucketCounts, (buckets) => {
        const fitted = fittedReuseRates(countsWith(buckets)).other;
        expect(fitted).toHaveLength(AGE_BUCKETS.length);
        for (let bucket = 1; bucket < fitted.length; bucket++)
          expect(fitted[bucket]!).toBeLessThanOrEqual(fitted[bucket - 1]! + 1e-12);
        const usedBefore = buckets.reduce((total, [used]) => total + used, 0);
        const usedAfter = buckets.reduce((total, [, alive], bucket) => total + fitted[bucket]! * alive, 0);
        expect(usedAfter).toBeCloseTo(usedBefore, 6);
        const measured = reuseRates(countsWith(buckets)).other;
        const falls =
          buckets.every(([, alive]) => alive > 0) &&
          measured.every((rate, bucket) => bucket === 0 || rate <= measured[bucket - 1]!);
        if (falls) expect(fitted).toEqual(measured);
      }),
    );
  });

  it("refits without one session's counts: the corpus less that session", () => {
    fc.assert(
      fc.property(bucketCounts, bucketCounts, (a, b) => {
        const both = countsWith(
          a.map(([used, alive], bucket) => [used + b[bucket]![0], alive + b[bucket]![1]]),
        );
        expect(withoutCounts(both, countsWith(b)).other).toEqual(countsWith(a).other);
      }),
    );
  });
});
