import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_TITLE_LENGTH, normalizeTitle, titleFromMessages } from "./session-title.ts";

/** The rule written the obvious way (copies the whole text): the reference the scanning version must match. */
function reference(text: string): string | undefined {
  const collapsed = text.replace(/[\s\p{Cc}]+/gu, " ").trim();
  if (collapsed === "") return undefined;
  const characters = [...collapsed];
  if (characters.length <= MAX_TITLE_LENGTH) return collapsed;
  return `${characters
    .slice(0, MAX_TITLE_LENGTH - 1)
    .join("")
    .trimEnd()}…`;
}

describe("normalizeTitle", () => {
  it("collapses whitespace and control characters and cuts to 100 characters, as the obvious rule does", () => {
    const unit = fc.constantFrom("a", "b", " ", "\n", "\t", "\u00a0", "\u0000", "\u007f", "é", "😀");
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 300 }), (text) => {
        expect(normalizeTitle(text)).toBe(reference(text));
      }),
      { numRuns: 2000 },
    );
    expect(normalizeTitle("  Fix   the\nbuild ")).toBe("Fix the build");
    expect(normalizeTitle("binary\u0000output")).toBe("binary output");
  });

  it("reads the text blocks of the first prompt as one text", () => {
    const prompt = {
      role: "user" as const,
      content: [
        { type: "text" as const, text: "Fix" },
        { type: "image" as const, mediaType: "image/png", data: "AAAA" },
        { type: "text" as const, text: " the  build" },
      ],
    };
    expect(titleFromMessages([prompt])).toBe("Fix the build");
  });
});
