// Leave-one-session-out choice of ctxkit's settings (bench/support/loso.ts): a session's figures never come from
// a choice its own runs took part in.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bestWithout, chooseWithout, pooled } from "../../bench/support/loso.ts";
import { PROVIDERS, type PolicyRun } from "../../bench/support/policy-runs.ts";

/** A run with only the figures the choice reads. */
function run(grounding: number, anchorsKept: number, anchors: number, cost: number): PolicyRun {
  return {
    withRereads: cost,
    grounding: { mean: grounding, anchors, anchorsKept },
  } as unknown as PolicyRun;
}
const both = (of: PolicyRun) => ({ anthropic: of, openai: of });
const goal = { grounding: 0.99, anchors: 0.99 };

describe("chooseWithout", () => {
  it("takes the cheapest candidate that reaches the goal on the other sessions, whatever the held-out one says", () => {
    // Candidate 0 is cheap and fails on session 1; candidate 1 costs more and reaches the goal everywhere.
    const cheap = [both(run(1, 10, 10, 100)), both(run(0.9, 5, 10, 100)), both(run(1, 10, 10, 100))];
    const safe = [both(run(1, 10, 10, 120)), both(run(1, 10, 10, 120)), both(run(1, 10, 10, 120))];
    // Without session 1, the cheap candidate reaches the goal; with session 1 among the others, it does not.
    expect(chooseWithout([cheap, safe], 1, goal, PROVIDERS)).toBe(0);
    expect(chooseWithout([cheap, safe], 0, goal, PROVIDERS)).toBe(1);
    expect(chooseWithout([cheap, safe], 2, goal, PROVIDERS)).toBe(1);
  });

  it("falls back to the candidate whose weakest figure is highest when none reaches the goal", () => {
    const low = [both(run(0.9, 9, 10, 50)), both(run(0.9, 9, 10, 50))];
    const better = [both(run(0.95, 9, 10, 80)), both(run(0.97, 10, 10, 80))];
    expect(chooseWithout([low, better], 0, goal, PROVIDERS)).toBe(1);
  });

  it("never depends on the held-out session's own runs (property)", () => {
    const figures = fc.record({
      grounding: fc.double({ min: 0.8, max: 1, noNaN: true }),
      anchors: fc.nat({ max: 20 }),
      cost: fc.integer({ min: 1, max: 1_000 }),
    });
    const session = fc.array(figures, { minLength: 3, maxLength: 3 });
    fc.assert(
      fc.property(fc.array(session, { minLength: 3, maxLength: 5 }), session, (sessions, replacement) => {
        const candidates = (rows: typeof sessions) =>
          [0, 1, 2].map((candidate) =>
            rows.map((row) => {
              const of = row[candidate]!;
              return both(run(of.grounding, Math.min(of.anchors, 10), 10, of.cost));
            }),
          );
        const held = 0;
        const changed = [replacement, ...sessions.slice(1)];
        expect(chooseWithout(candidates(changed), held, goal, PROVIDERS)).toBe(
          chooseWithout(candidates(sessions), held, goal, PROVIDERS),
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
