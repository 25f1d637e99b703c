import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ContentBlock } from "../model/message.ts";
import {
  MAX_SEARCH_TEXT,
  MAX_WORD_LENGTH,
  messageSearchSource,
  normalizeSearchText,
  searchTextOf,
} from "./search-text.ts";

const word = fc.string({ unit: fc.constantFrom("a", "b", " ", "\n", "é"), maxLength: 40 });
const block = fc.oneof(
  word.map((text): ContentBlock => ({ type: "text", text })),
  fc
    .tuple(word, word)
    .map(([name, value]): ContentBlock => ({ type: "tool-call", id: "c1", name, input: { value } })),
  word.map((content): ContentBlock => ({ type: "tool-result", callId: "c1", toolName: "t", content })),
  fc.constant<ContentBlock>({ type: "image", mediaType: "image/png", data: "AAAA" }),
);

describe("messageSearchSource", () => {
  it("cut to a limit, is the whole source cut there", () => {
    fc.assert(
      fc.property(fc.array(block, { maxLength: 6 }), fc.nat(120), (content, limit) => {
        expect(messageSearchSource({ content }, limit)).toBe(
          messageSearchSource({ content }).slice(0, limit),
        );
      }),
      { numRuns: 1000 },
    );
  });

  it("indexes the start of a huge message without reading all of it", () => {
    const text = "word ".repeat(5_000_000);
    const words = searchTextOf({ content: [{ type: "text", text }] });
    expect(words.length).toBeLessThanOrEqual(MAX_SEARCH_TEXT);
    expect(words.startsWith("word word")).toBe(true);
  });
});

describe("normalizeSearchText", () => {
  /** The definition: lower case, split on anything but Unicode letters and digits, long and empty words dropped. */
  const reference = (text: string) =>
    text
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter((word) => word !== "" && word.length <= MAX_WORD_LENGTH)
      .join(" ");

  it("gives the reference's words for any text, ASCII or not", () => {
    const ascii = fc.string({ unit: "binary-ascii", maxLength: 200 });
    const long = fc.string({ unit: fc.constantFrom("a", "Z", "7", " ", "-"), maxLength: 300 });
    const mixed = fc.string({
      unit: fc.constantFrom("a", "É", "ß", "İ", "\u212a", "١", "中", "😀", ".", " "),
      maxLength: 80,
    });
    fc.assert(
      fc.property(fc.oneof(ascii, long, mixed, fc.string({ unit: "grapheme", maxLength: 80 })), (text) => {
        expect(normalizeSearchText(text)).toBe(reference(text));
      }),
      { numRuns: 2_000 },
    );
    expect(normalizeSearchText("Fix src/App.tsx! KELVIN \u212a")).toBe("fix src app tsx kelvin k");
  });
});
