import { describe, expect, it } from "vitest";
import { estimatorProfile } from "./estimator-profiles.ts";
import { fileTokens, imageTokens, imageTokensForSize, pdfPageCount } from "./media-tokens.ts";

const claudeCosts = estimatorProfile("claude").costs;
const countWords = (text: string) => text.split(/\s+/).filter(Boolean).length;

describe("imageTokensForSize", () => {
  it("follows OpenAI's 512-pixel tiles after fitting and shortening", () => {
    expect(imageTokensForSize({ width: 1024, height: 1024 }, "tiles-512")).toBe(765);
    // 2048×4096 → 1024×2048 → 768×1536: 2 × 3 tiles.
    expect(imageTokensForSize({ width: 2048, height: 4096 }, "tiles-512")).toBe(85 + 170 * 6);
  });

  it("follows Anthropic's pixels ÷ 750, capped near 1.15 megapixels", () => {
    expect(imageTokensForSize({ width: 1000, height: 1000 }, "pixels-750")).toBe(1334);
    expect(imageTokensForSize({ width: 4000, height: 3000 }, "pixels-750")).toBeLessThanOrEqual(1534);
  });

  it("follows Gemini's 258 per small image or per 768-pixel tile", () => {
    expect(imageTokensForSize({ width: 300, height: 300 }, "tiles-768")).toBe(258);
    expect(imageTokensForSize({ width: 1000, height: 1000 }, "tiles-768")).toBe(4 * 258);
  });
});

describe("imageTokens and fileTokens", () => {
  it("uses the default when an image's size cannot be known", () => {
    expect(
      imageTokens({ type: "image", mediaType: "image/png", url: "https://example.com/a.png" }, claudeCosts),
    ).toBe(claudeCosts.defaultImageTokens);
  });

  it("charges OpenAI's flat 85 tokens for a low-detail image, and only under OpenAI's rule", () => {
    const openaiCosts = estimatorProfile("o200k_base").costs;
    const low = {
      type: "image",
      mediaType: "image/png",
      url: "https://example.com/a.png",
      detail: "low",
    } as const;
    expect(imageTokens(low, openaiCosts)).toBe(85);
    expect(imageTokens({ ...low, detail: "high" }, openaiCosts)).toBe(openaiCosts.defaultImageTokens);
    expect(imageTokens(low, claudeCosts)).toBe(claudeCosts.defaultImageTokens);
  });

  it("counts text files as text and PDFs per page", () => {
    const textFile = { type: "file", mediaType: "text/plain", data: btoa("one two three four") } as const;
    expect(fileTokens(textFile, claudeCosts, countWords)).toBe(4);
    const pdf = btoa("%PDF-1.4 /Type /Pages /Type /Page /Type/Page /Type /Page");
    expect(pdfPageCount(atob(pdf))).toBe(3);
    expect(
      fileTokens({ type: "file", mediaType: "application/pdf", data: pdf }, claudeCosts, countWords),
    ).toBe(3 * claudeCosts.pdfPageTokens);
    expect(
      fileTokens({ type: "file", mediaType: "application/pdf", ref: "blob_1" }, claudeCosts, countWords),
    ).toBe(claudeCosts.defaultFileTokens);
  });
});
