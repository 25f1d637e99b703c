// Leave-one-session-out choice of ctxkit's settings (bench/support/loso.ts): a session's figures never come from
// a choice its own runs took part in.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bestWithout, dominatingWithout, pooled } from "../../bench/support/loso.ts";
import { PROVIDERS, type PolicyRun } from "../../bench/support/policy-runs.ts";

/** A run with only the figures the choice reads. */
function run(grounding: number, anchorsKept: number, anchors: number, cost: number): PolicyRun {
  return {
    withRereads: cost,
    grounding: { mean: grounding, anchors, anchorsKept },
  } as unknown as PolicyRun;
}
const both = (of: PolicyRun) => ({ anthropic: of, openai: of });

describe("dominatingWithout", () => {
  const peer = [both(run(0.99, 99, 100, 100)), both(run(0.99, 99, 100, 100)), both(run(0.99, 99, 100, 100))];

  it("takes the candidate that dominates the most peers on the other sessions, whatever the held-out one says", () => {
    // Candidate 0 is cheaper than the peer but keeps less on session 1; candidate 1 keeps everything for a little
    // less than the peer costs everywhere.
    const cheap = [both(run(1, 100, 100, 80)), both(run(0.9, 90, 100, 80)), both(run(1, 100, 100, 80))];
    const keeping = [both(run(1, 100, 100, 95)), both(run(1, 100, 100, 95)), both(run(1, 100, 100, 95))];
    // Without session 1, both dominate the peer and the cheaper wins; with session 1 among the others, only the
    // keeping candidate does.
    expect(dominatingWithout([cheap, keeping], [peer], 1, PROVIDERS)).toBe(0);
    expect(dominatingWithout([cheap, keeping], [peer], 0, PROVIDERS)).toBe(1);
    expect(dominatingWithout([cheap, keeping], [peer], 2, PROVIDERS)).toBe(1);
  });

  it("counts a peer dominated only under every pricing, and keeps the default when none is", () => {
    const costlierUnderOpenAi = peer.map(() => ({
      anthropic: run(1, 100, 100, 90),
      openai: run(1, 100, 100, 110),
    }));
    const cheaper = peer.map(() => both(run(0.9, 90, 100, 50)));
    expect(dominatingWithout([costlierUnderOpenAi, cheaper], [peer], 0, PROVIDERS)).toBe(0);
    // Without the default among them, the cheapest of the tied.
    const dominating = peer.map(() => both(run(1, 100, 100, 90)));
    const cheaperDominating = peer.map(() => both(run(0.995, 100, 100, 80)));
    expect(dominatingWithout([cheaper, dominating, cheaperDominating], [peer], 0, PROVIDERS)).toBe(2);
  });

  it("on a tie keeps the default, unless a tied candidate dominates the default as printed", () => {
    const base = peer.map(() => both(run(0.995, 100, 100, 90)));
    // Cheaper by less than the tables print (0.05% rounds to nothing): no better than the default.
    const barelyCheaper = peer.map(() => both(run(0.995, 100, 100, 89.97)));
    expect(dominatingWithout([base, barelyCheaper], [peer], 0, PROVIDERS)).toBe(0);
    // Cheaper by a printed step for the same figures: it dominates the default and is taken.
    const cheaper = peer.map(() => both(run(0.995, 100, 100, 80)));
    expect(dominatingWithout([base, barelyCheaper, cheaper], [peer], 0, PROVIDERS)).toBe(2);
    // Cheaper but keeping less of the anchors: a trade with the default, which stays.
    const trading = peer.map(() => both(run(0.995, 99, 100, 80)));
    expect(dominatingWithout([base, trading], [peer], 0, PROVIDERS)).toBe(0);
  });

  it("compares figures as the tables print them: a difference below 0.1 point decides nothing", () => {
    // 0.04 point less grounding than the peer prints the same: this cheaper candidate dominates it as much as the
    // one keeping more, and wins as the cheaper.
    const printedSame = peer.map(() => both(run(0.9896, 99, 100, 90)));
    const keepingMore = peer.map(() => both(run(0.995, 100, 100, 95)));
    expect(dominatingWithout([printedSame, keepingMore], [peer], 0, PROVIDERS)).toBe(0);
  });

  it("never depends on the held-out session's own runs (property)", () => {
    const figures = fc.record({
      grounding: fc.double({ min: 0.8, max: 1, noNaN: true }),
      anchors: fc.nat({ max: 20 }),
      cost: fc.integer({ min: 1, max: 1_000 }),
    });
    // Per session: three candidates' figures and two peers'.
    const session = fc.array(figures, { minLength: 5, maxLength: 5 });
    fc.assert(
      fc.property(fc.array(session, { minLength: 3, maxLength: 5 }), session, (sessions, replacement) => {
        const policies = (rows: typeof sessions, from: number, to: number) =>
          [...Array(to - from).keys()].map((offset) =>
            rows.map((row) => {
              const of = row[from + offset]!;
              return both(run(of.grounding, Math.min(of.anchors, 10), 10, of.cost));
            }),
          );
        const held = 0;
        const changed = [replacement, ...sessions.slice(1)];
        expect(dominatingWithout(policies(changed, 0, 3), policies(changed, 3, 5), held, PROVIDERS)).toBe(
          dominatingWithout(policies(sessions, 0, 3), policies(sessions, 3, 5), held, PROVIDERS),
        );
      }),
    );
  });

  it("pools grounding per session and anchors over all anchors", () => {
    const runs = [both(run(1, 1, 1, 10)), both(run(0.5, 0, 3, 30))];
    expect(pooled(runs, "openai")).toEqual({ grounding: 0.75, anchors: 0.25, cost: 40 });
    expect(pooled(runs, "openai", (session) => session === 0)).toEqual({
      grounding: 1,
      anchors: 1,
      cost: 10,
    });
  });
});

describe("bestWithout", () => {
  it("takes the candidate whose weakest figure on the other sessions is highest, the cheaper on a tie", () => {
    // Candidate 1 is best without session 0; with session 0 among the others, candidate 0 is.
    const steady = [both(run(0.9, 9, 10, 50)), both(run(0.9, 9, 10, 50)), both(run(0.9, 9, 10, 50))];
    const uneven = [both(run(0.5, 9, 10, 60)), both(run(0.95, 10, 10, 60)), both(run(0.95, 10, 10, 60))];
    expect(bestWithout([steady, uneven], 0, PROVIDERS)).toBe(1);
    expect(bestWithout([steady, uneven], 1, PROVIDERS)).toBe(0);
    const cheaper = steady.map(() => both(run(0.9, 9, 10, 40)));
    expect(bestWithout([steady, cheaper], 0, PROVIDERS)).toBe(1);
  });

  it("never depends on the held-out session's own runs (property)", () => {
    const figures = fc.record({
      grounding: fc.double({ min: 0.5, max: 1, noNaN: true }),
      cost: fc.integer({ min: 1, max: 1_000 }),
    });
    const session = fc.array(figures, { minLength: 2, maxLength: 2 });
    fc.assert(
      fc.property(fc.array(session, { minLength: 2, maxLength: 5 }), session, (sessions, replacement) => {
        const candidates = (rows: typeof sessions) =>
          [0, 1].map((candidate) =>
            rows.map((row) => both(run(row[candidate]!.grounding, 1, 1, row[candidate]!.cost))),
          );
        const changed = [replacement, ...sessions.slice(1)];
        expect(bestWithout(candidates(changed), 0, PROVIDERS)).toBe(
          bestWithout(candidates(sessions), 0, PROVIDERS),
        );
      }),
    );
  });
});
