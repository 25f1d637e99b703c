import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sequentialIds } from "../model/ids.ts";
import type { Message } from "../model/message.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import { createGovernor } from "./governor.ts";
import { UsageAnchor } from "./usage-anchor.ts";
import { preset } from "./presets.ts";

describe("UsageAnchor", () => {
  it("passes local counts through until a usage is observed", () => {
    expect(new UsageAnchor().estimate(1_234)).toBe(1_234);
  });

  it("returns the reported count for the anchored payload and scales only the change since", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 100, max: 200_000 }),
        fc.double({ min: 0.91, max: 2, noNaN: true }),
        fc.integer({ min: 0, max: 50_000 }),
        (estimated, ratio, growth) => {
          const anchor = new UsageAnchor();
          const reported = Math.round(estimated * ratio);
          anchor.observe(estimated, reported);
          expect(anchor.estimate(estimated)).toBe(reported);
          const grown = anchor.estimate(estimated + growth);
          expect(grown).toBeGreaterThanOrEqual(reported);
          expect(Math.abs(grown - (reported + growth * (reported / estimated)))).toBeLessThanOrEqual(1);
        },
      ),
    );
  });

  it("estimates a view a checkpoint shrank by the measured ratio, not by the anchored figure minus the change", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1_000, max: 200_000 }),
        fc.integer({ min: 32, max: 128 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (estimated, sixtyFourths, kept) => {
          const ratio = sixtyFourths / 64;
          const anchor = new UsageAnchor();
          anchor.observe(estimated, ratio * estimated);
          const shrunk = Math.floor(estimated * kept);
          // Never relaxed by more than 10%: 90% of the local count when the provider counts less than that.
          expect(anchor.estimate(shrunk)).toBe(Math.ceil(Math.max(ratio, 0.9) * shrunk));
        },
      ),
    );
  });

  it("never relaxes a local count by more than 10%, and carries what a ratio above 2 does not explain as an offset", () => {
    const anchor = new UsageAnchor();
    anchor.observe(1_000, 300); // the provider counts 30%: taken as 90%
    expect([anchor.scale, anchor.offset, anchor.estimate(2_000)]).toEqual([0.9, 0, 1_800]);
    anchor.observe(1_000, 5_000); // five times the count: 2× per token, and 3,000 tokens the counter misses
    expect([anchor.scale, anchor.offset]).toEqual([2, 3_000]);
    expect(anchor.estimate(1_000)).toBe(5_000);
    expect(anchor.estimate(200)).toBe(3_400); // a smaller view is never estimated above the report
  });

  it("inverts its estimate: countedLimit is the largest count whose estimate stays within a limit", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100_000 }),
        fc.double({ min: 0.1, max: 5, noNaN: true }),
        fc.integer({ min: 0, max: 300_000 }),
        (estimated, ratio, limit) => {
          const anchor = new UsageAnchor();
          anchor.observe(estimated, estimated * ratio);
          const counted = anchor.countedLimit(limit);
          if (counted >= 0) expect(anchor.estimate(counted)).toBeLessThanOrEqual(limit);
          expect(anchor.estimate(counted + 1)).toBeGreaterThan(limit);
        },
      ),
    );
  });

  it("ignores reports that cannot belong to the payload and forgets on reset", () => {
    const anchor = new UsageAnchor();
    anchor.observe(0, 500);
    anchor.observe(1_000, 0);
    expect(anchor.reported).toBeUndefined();
    anchor.observe(1_000, 10_000); // ten times the count: the growth is scaled by at most 2
    expect(anchor.estimate(2_000)).toBe(12_000);
    anchor.reset();
    expect(anchor.estimate(2_000)).toBe(2_000);
  });
});

describe("Governor anchored on reported usage", () => {
  /** A conversation of `turns` user/assistant pairs of ~300 counted tokens each. */
  function turns(count: number): Message[] {
    const builder = new HistoryBuilder();
    for (let turn = 1; turn <= count; turn++) {
      builder.user(`question ${turn} ${"word ".repeat(140)}`).reply(`answer ${turn} ${"word ".repeat(140)}`);
    }
    return builder.build();
  }

  /** Replays the history request by request; `reportRatio` is how the provider's count compares with ours. */
  async function firstCompaction(reportRatio: number | undefined) {
    const governor = createGovernor({
      contextWindow: 20_000,
      reservedOutputTokens: 2_000,
      counter: new FakeTokenCounter(),
      summarizer: new FakeSummarizer(),
      ids: sequentialIds(),
      // The compaction trigger is what anchoring moves; settled-history compaction is priced, not triggered.
      pipeline: preset("default", { compactionTrigger: 0.6, compactSettledHistory: false }),
    });
    const history = turns(60);
    const anchoredTotals: number[] = [];
    for (let end = 1; end <= history.length; end += 2) {
      const request = await governor.prepare(history.slice(0, end));
      if (request.events.some((event) => event.type === "compaction-end")) return { end, anchoredTotals };
      if (request.tokens.anchoredTotal !== undefined) anchoredTotals.push(request.tokens.anchoredTotal);
      if (reportRatio !== undefined) {
        governor.observeUsage(request.tokens, Math.round(request.tokens.total * reportRatio));
      }
    }
    throw new Error("no compaction happened");
  }

  it("compacts earlier when the provider counts more than the local counter", async () => {
    const local = await firstCompaction(undefined);
    const anchored = await firstCompaction(1.5);
    expect(local.anchoredTotals).toEqual([]);
    expect(anchored.end).toBeLessThan(local.end);
    // Until then, what the provider would have counted stayed under the trigger (60% of 18k usable).
    for (const total of anchored.anchoredTotals) expect(total).toBeLessThanOrEqual(0.6 * 18_000 + 700);
  });

  it("never relaxes decisions by more than 10% when the provider counts less", async () => {
    const local = await firstCompaction(undefined);
    const anchored = await firstCompaction(0.5);
    expect(anchored.end).toBeGreaterThan(local.end);
    expect(anchored.end).toBeLessThanOrEqual(local.end + 2 * Math.ceil(local.end / 10) + 2);
  });
});
