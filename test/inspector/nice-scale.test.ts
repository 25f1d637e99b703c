import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { niceScale } from "../../web/src/nice-scale.ts";

describe("niceScale (the inspector chart's y-axis)", () => {
  it("ends at the first round tick at or above the largest token count, with at most 4 ticks of 1, 2, 2.5 or 5 × 10^k", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e9 }), (largest) => {
        const { max, step } = niceScale(largest);
        expect(max).toBeGreaterThanOrEqual(largest);
        expect(max - step).toBeLessThan(largest);
        const ticks = Math.round(max / step);
        expect(ticks).toBeGreaterThanOrEqual(1);
        expect(ticks).toBeLessThanOrEqual(4);
        const mantissa = step / 10 ** Math.floor(Math.log10(step) + 1e-9);
        expect([1, 2, 2.5, 5].some((round) => Math.abs(mantissa - round) < 1e-6)).toBe(true);
      }),
    );
  });

  it("fits typical token counts tightly and survives an empty chart", () => {
    expect(niceScale(76_741)).toEqual({ max: 80_000, step: 20_000 });
    expect(niceScale(181_000)).toEqual({ max: 200_000, step: 50_000 });
    expect(niceScale(0)).toEqual({ max: 1, step: 0.25 });
  });
});
