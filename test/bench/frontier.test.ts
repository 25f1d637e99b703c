// Where ctxkit stands against a peer on cost, strict grounding and anchors (bench/support/frontier.ts).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { frontierRows, standing, type FrontierPoint } from "../../bench/support/frontier.ts";

const point = (name: string, cost: number, grounding: number, anchors: number): FrontierPoint => ({
  name,
  cost: { anthropic: cost, openai: cost },
  grounding: { anthropic: grounding, openai: grounding },
  anchors: { anthropic: anchors, openai: anchors },
});

describe("standing", () => {
  it("names dominance, trades and ties on the three axes", () => {
    const ctxkit = point("ctxkit", 100, 0.997, 0.992);
    expect(standing(ctxkit, point("dear", 110, 0.99, 0.99), "anthropic")).toBe("ctxkit dominates");
    expect(standing(ctxkit, point("better", 95, 0.999, 0.999), "anthropic")).toBe("peer dominates");
    expect(standing(ctxkit, point("langchain", 103.2, 0.999, 0.999), "anthropic")).toBe(
      "trade: ctxkit cheaper; less grounding, fewer anchors",
    );
    expect(standing(ctxkit, point("cowagent", 85, 0.94, 0.9), "anthropic")).toBe(
      "trade: ctxkit more grounding, more anchors; costlier",
    );
    expect(standing(ctxkit, point("twin", 100.01, 0.9971, 0.9919), "anthropic")).toBe("same");
    expect(standing(ctxkit, point("mixed", 100, 0.999, 0.98), "anthropic")).toBe(
      "trade: ctxkit more anchors; less grounding",
    );
  });

  it("is the mirror image when the two swap places", () => {
    const figure = fc.record({
      cost: fc.double({ min: 1, max: 1e6, noNaN: true }),
      grounding: fc.double({ min: 0, max: 1, noNaN: true }),
      anchors: fc.double({ min: 0, max: 1, noNaN: true }),
    });
    // Swapping the two swaps what each is ahead and behind on.
    const mirror = (text: string) =>
      text
        .replace(
          /cheaper|costlier|more (grounding|anchors)|less grounding|fewer anchors/g,
          (word) =>
            ({
              cheaper: "costlier",
              costlier: "cheaper",
              "more grounding": "less grounding",
              "less grounding": "more grounding",
              "more anchors": "fewer anchors",
              "fewer anchors": "more anchors",
            })[word]!,
        )
        .replace("ctxkit dominates", "PEER")
        .replace("peer dominates", "ctxkit dominates")
        .replace("PEER", "peer dominates");
    const axesOf = (text: string) => new Set(text.replace(/^trade: ctxkit /, "").split(/[;,] /));
    fc.assert(
      fc.property(figure, figure, (a, b) => {
        // Costs within the 0.1% tie band one way can fall outside it the other way: keep them clearly apart or equal.
        fc.pre(a.cost === b.cost || Math.abs(a.cost / b.cost - 1) > 0.01);
        const left = point("a", a.cost, a.grounding, a.anchors);
        const right = point("b", b.cost, b.grounding, b.anchors);
        const forward = standing(left, right, "openai");
        const backward = standing(right, left, "openai");
        if (forward.startsWith("trade")) expect(axesOf(backward)).toEqual(axesOf(mirror(forward)));
        else expect(backward).toBe(mirror(forward));
      }),
    );
  });
});

describe("frontierRows", () => {
  it("prints the differences in percent and points with their standing, per pricing", () => {
    const ctxkit = point("ctxkit", 96.8, 0.997, 0.992);
    expect(frontierRows(ctxkit, [point("LangChain v1", 100, 0.999, 0.999)], ["anthropic"])).toEqual([
      ["LangChain v1", "−3.2% · −0.2 · −0.7: trade: ctxkit cheaper; less grounding, fewer anchors"],
    ]);
  });
});
