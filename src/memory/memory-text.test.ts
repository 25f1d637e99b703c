import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  isNearDuplicate,
  jaccard,
  matchedTermCount,
  normalizeMemoryText,
  shingleCount,
  shingleCountRange,
  shinglesOf,
} from "./memory-text.ts";

const words = fc.array(fc.constantFrom("alpha", "beta", "gamma", "delta", "epsilon", "zeta"), {
  minLength: 1,
  maxLength: 60,
});

describe("memory text", () => {
  it("normalises case, punctuation and spacing, idempotently", () => {
    expect(normalizeMemoryText("  Prefers TABS,\n not   spaces! ")).toBe("prefers tabs not spaces");
    fc.assert(
      fc.property(fc.string(), (text) => {
        const once = normalizeMemoryText(text);
        expect(normalizeMemoryText(once)).toBe(once);
      }),
    );
  });

  it("builds a bag of bigrams with start and end markers", () => {
    expect(shinglesOf("a b a b")).toEqual(
      new Map([
        ["^ a", 1],
        ["a b", 2],
        ["b a", 1],
        ["b $", 1],
      ]),
    );
    expect(shinglesOf("")).toEqual(new Map());
  });

  it("counts shingles as the bag's total and keeps near-duplicates inside the count range", () => {
    fc.assert(
      fc.property(words, words, (first, second) => {
        const a = first.join(" ");
        const b = second.join(" ");
        const total = [...shinglesOf(a).values()].reduce((sum, count) => sum + count, 0);
        expect(shingleCount(a)).toBe(total);
        if (isNearDuplicate(a, b)) {
          const range = shingleCountRange(shingleCount(a));
          expect(shingleCount(b)).toBeGreaterThanOrEqual(range.min);
          expect(shingleCount(b)).toBeLessThanOrEqual(range.max);
        }
      }),
    );
  });

  it("has a symmetric similarity of 1 for equal texts only among short ones", () => {
    fc.assert(
      fc.property(words, words, (first, second) => {
        const a = shinglesOf(first.join(" "));
        const b = shinglesOf(second.join(" "));
        expect(jaccard(a, b)).toBeCloseTo(jaccard(b, a), 12);
        expect(jaccard(a, a)).toBe(1);
        if (first.length <= 3 && second.length <= 3 && first.join(" ") !== second.join(" ")) {
          expect(isNearDuplicate(first.join(" "), second.join(" "))).toBe(false);
        }
      }),
    );
  });

  it("keeps word order and repetitions apart", () => {
    expect(isNearDuplicate("prefers tabs over spaces", "prefers spaces over tabs")).toBe(false);
    expect(isNearDuplicate("alpha alpha alpha", "alpha alpha")).toBe(false);
  });

  it("merges a long text with one word appended, but not a short one", () => {
    const long = Array.from({ length: 30 }, (_, index) => `word${index}`).join(" ");
    expect(isNearDuplicate(long, `${long} extra`)).toBe(true);
    expect(isNearDuplicate("uses pnpm for installs", "uses pnpm for installs now")).toBe(false);
  });

  it("counts distinct matched terms as whole words", () => {
    expect(matchedTermCount("portable staging build", ["port", "staging", "staging", "build"])).toBe(2);
    expect(matchedTermCount("portable staging build", ["port"])).toBe(0);
  });
});
