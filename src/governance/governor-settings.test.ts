import { describe, expect, it } from "vitest";
import { ValidationError } from "../errors/index.ts";
import { cacheProfiles } from "../pricing/cache-profile.ts";
import { governancePricing, resolveGovernorSettings } from "./governor-settings.ts";
import { DEFAULT_REUSE_RATES, REUSE_AGE_LIMITS } from "./reuse-rates.ts";

describe("governancePricing", () => {
  it("weighs the 5-minute entries by default, and the 1-hour ones (written at 2x, alive an hour) when sent", () => {
    expect(governancePricing(resolveGovernorSettings())).toEqual(cacheProfiles.anthropic);
    const long = governancePricing(resolveGovernorSettings({ cacheTtl: "1h" }));
    expect(long.write).toBe(2);
    expect(long.ttlMs).toBe(60 * 60_000);
    expect(long.read).toBe(cacheProfiles.anthropic.read);
  });

  it("refuses a TTL Anthropic does not offer", () => {
    expect(() => resolveGovernorSettings({ cacheTtl: "2h" as "1h" })).toThrow(ValidationError);
  });
});

describe("reuseRates", () => {
  const falling = [0.5, 0.2, 0.1, 0.05, 0.03, 0.02, 0.01, 0.005, 0.001, 0];

  it("takes one non-rising rate per age bucket for the kinds given", () => {
    expect(resolveGovernorSettings({ reuseRates: { read: falling } }).reuseRates).toEqual({ read: falling });
    expect(resolveGovernorSettings().reuseRates).toBeUndefined();
  });

  it("refuses rates that rise with age, the wrong number of buckets, chances outside 0–1 and unknown kinds", () => {
    const rising = falling.with(4, 0.06);
    expect(() => resolveGovernorSettings({ reuseRates: { read: rising } })).toThrow(/must not rise with age/);
    expect(() => resolveGovernorSettings({ reuseRates: { read: falling.slice(1) } })).toThrow(
      /one rate per age bucket/,
    );
    expect(() => resolveGovernorSettings({ reuseRates: { read: falling.with(0, 1.5) } })).toThrow(
      ValidationError,
    );
    expect(() => resolveGovernorSettings({ reuseRates: { reads: falling } as never })).toThrow(
      ValidationError,
    );
  });

  it("ships measured defaults that fall with age, one per bucket", () => {
    for (const row of Object.values(DEFAULT_REUSE_RATES)) {
      expect(row).toHaveLength(REUSE_AGE_LIMITS.length);
      expect(resolveGovernorSettings({ reuseRates: { other: [...row] } }).reuseRates?.other).toEqual(row);
    }
  });
});
