import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { createPriceTable, DEFAULT_PRICES, findPrice, usageCost } from "./model-prices.ts";

describe("usageCost", () => {
  const sonnet = DEFAULT_PRICES["claude-sonnet-4-5"]!;

  it("bills uncached input, cache reads, cache writes and output each at its price", () => {
    const usage = { input: 1_000_000, cacheRead: 500_000, cacheWrite: 200_000, output: 100_000 };
    // 300k uncached × $3 + 500k × $0.30 + 200k × $3.75 + 100k × $15, per million.
    expect(usageCost(usage, sonnet)).toBeCloseTo(0.9 + 0.15 + 0.75 + 1.5, 10);
  });

  it("bills writes to 1-hour entries at twice the input price, not the 5-minute write price", () => {
    const usage = { input: 1_000_000, cacheWrite: 1_000_000, cacheWriteLong: 1_000_000, output: 0 };
    expect(usageCost(usage, sonnet)).toBeCloseTo(6, 10);
    const mixed = { input: 1_000_000, cacheWrite: 1_000_000, cacheWriteLong: 400_000, output: 0 };
    expect(usageCost(mixed, sonnet)).toBeCloseTo(0.6 * 3.75 + 0.4 * 6, 10);
  });

  it("prices long writes as other writes when a table gives no long-write price, and is 0 for unknown models", () => {
    const table = createPriceTable({ custom: { input: 2, output: 4, cacheWrite: 2.5 } });
    const usage = { input: 1_000_000, cacheWrite: 1_000_000, cacheWriteLong: 1_000_000, output: 0 };
    expect(usageCost(usage, findPrice(table, "custom"))).toBeCloseTo(2.5, 10);
    expect(usageCost(usage, findPrice(table, "no-such-model"))).toBe(0);
  });
});

describe("findPrice", () => {
  it("answers a name asked again as it did the first time, over more names than it remembers", () => {
    const names = [...Object.keys(DEFAULT_PRICES), "no-such-model", "anthropic:claude-sonnet-4-5-20250929"];
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 12 })), { maxLength: 200 }),
        (asked) => {
          const first = new Map<string, unknown>();
          for (const name of asked) {
            const price = findPrice(DEFAULT_PRICES, name);
            if (!first.has(name)) first.set(name, price);
            expect(price).toBe(first.get(name));
          }
        },
      ),
    );
  });

  it("follows a table that is not frozen when it changes", () => {
    const table: Record<string, { input: number; output: number }> = { mine: { input: 1, output: 2 } };
    expect(findPrice(table, "mine")?.input).toBe(1);
    table["mine"] = { input: 5, output: 6 };
    expect(findPrice(table, "mine")?.input).toBe(5);
  });
});
