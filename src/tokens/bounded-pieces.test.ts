import fc from "fast-check";
import { countTokens as cl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as o200k } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { boundedPieces, MAX_RUN } from "./bounded-pieces.ts";

const NO_SPECIAL = { disallowedSpecial: new Set<string>() };
const encodings = { o200k_base: o200k, cl100k_base: cl100k };

function countPieces(pieces: readonly string[], count: typeof o200k): number {
  return pieces.reduce((sum, piece) => sum + count(piece, NO_SPECIAL), 0);
}

/** Characters of every class the cut rule distinguishes, several of each, in runs the patterns treat apart. */
const characters = [
  ..."aZzéßЖжΩ中文字かカ한", // letters: lower, upper, Latin-1, Cyrillic, Greek, CJK, kana, hangul
  "\u0301",
  "\u093f", // combining marks
  ..."0719٣", // digits, one Arabic-Indic
  "Ⅻ", // a letter number
  "'",
  ...'"’.,;:!?/\\-_=+*#@$%&()[]{}<>|~`^',
  ..."。，、！？", // CJK punctuation
  ..." \t\u00a0\u3000\u2028\v\f", // spaces
  "\n",
  "\r",
  "😀",
  "👍🏽",
  "𝟏", // an astral digit
  "𐐷", // an astral letter
];
/** Random text of those characters, each repeated 1–3 times (so doubled spaces and line breaks are common). */
const text = fc
  .array(
    fc
      .tuple(fc.constantFrom(...characters), fc.integer({ min: 1, max: 3 }))
      .map(([part, times]) => part.repeat(times)),
    { maxLength: 30 },
  )
  .map((parts) => parts.join(""));

describe("boundedPieces", () => {
  it("returns ordinary text whole", () => {
    const prose = "Counting is exact for ordinary text: nothing is cut.\n".repeat(20);
    expect(boundedPieces(prose)).toEqual([prose]);
  });

  it.each(Object.entries(encodings))(
    "cuts only where %s splits the same, so counting the pieces apart changes nothing",
    (_name, count) => {
      fc.assert(
        fc.property(text, (sample) => {
          // A piece size of 1 closes a piece at every safe cut; no forced cuts.
          const pieces = boundedPieces(sample, Infinity, 1);
          expect(pieces.join("")).toBe(sample);
          expect(countPieces(pieces, count)).toBe(count(sample, NO_SPECIAL));
        }),
        { numRuns: 10_000 },
      );
    },
  );

  it("bounds every run without a safe cut, never splitting a surrogate pair", () => {
    const emoji = "😀".repeat(MAX_RUN);
    const pieces = boundedPieces(`x${emoji}`);
    expect(pieces.join("")).toBe(`x${emoji}`);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(MAX_RUN);
      expect(piece).toMatch(/^(x|\p{Emoji_Presentation})\p{Emoji_Presentation}*$/u);
    }
    expect(boundedPieces("a".repeat(2_500)).map((piece) => piece.length)).toEqual([1024, 1024, 452]);
  });

  it("closes long pieces at safe cuts only", () => {
    const words = "lorem ipsum dolor ".repeat(10_000);
    const pieces = boundedPieces(words);
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join("")).toBe(words);
    for (const piece of pieces.slice(1)) expect(piece.startsWith(" ")).toBe(true);
  });
});
