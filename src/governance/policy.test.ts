import { describe, expect, it } from "vitest";
import { ValidationError } from "../errors/index.ts";
import { cacheProfiles } from "../pricing/cache-profile.ts";
import { governancePricing, resolvePolicy } from "./policy.ts";

describe("governancePricing", () => {
  it("weighs the 5-minute entries by default, and the 1-hour ones (written at 2x, alive an hour) when sent", () => {
    expect(governancePricing(resolvePolicy())).toEqual(cacheProfiles.anthropic);
    const long = governancePricing(resolvePolicy({ cacheTtl: "1h" }));
    expect(long.write).toBe(2);
    expect(long.ttlMs).toBe(60 * 60_000);
    expect(long.read).toBe(cacheProfiles.anthropic.read);
  });

  it("refuses a TTL Anthropic does not offer", () => {
    expect(() => resolvePolicy({ cacheTtl: "2h" as "1h" })).toThrow(ValidationError);
  });
});
