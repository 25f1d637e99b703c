import type { FileBlock, ImageBlock } from "../model/message.ts";
import { imageDimensions, type ImageDimensions } from "./image-dimensions.ts";

/**
 * How a provider bills an image:
 * - `tiles-512` (OpenAI GPT-4o/4.1/5, high detail): fit in 2048×2048, shortest side to 768, then
 *   85 + 170 per 512-pixel tile.
 * - `pixels-750` (Anthropic; also a fair proxy for Qwen-VL's 28×28 patches): long edge ≤ 1568 and about
 *   1.15 megapixels at most, then one token per 750 pixels.
 * - `tiles-768` (Gemini): 258 when both sides ≤ 384, else 258 per 768-pixel tile.
 */
export type ImageTokenRule = "tiles-512" | "pixels-750" | "tiles-768";

/** Fixed costs of binary content, per tokenizer family. */
export interface MediaCosts {
  readonly imageRule: ImageTokenRule;
  /** Used when an image's size cannot be read (a URL, a blob reference, an unknown format). */
  readonly defaultImageTokens: number;
  /** Tokens per PDF page (text plus page image where the provider renders pages). */
  readonly pdfPageTokens: number;
  /** Used for a file whose content is not inline (a URL or a blob reference) or whose type is opaque. */
  readonly defaultFileTokens: number;
}

/** About 1.5k: an upper bound of the common cases (OpenAI high detail ≤ 1,445; Claude ≤ ~1,600). */
export const DEFAULT_IMAGE_TOKENS = 1_500;

function scaled(dimensions: ImageDimensions, factor: number): ImageDimensions {
  if (factor >= 1) return dimensions;
  return { width: dimensions.width * factor, height: dimensions.height * factor };
}

/**
 * Tokens of an image of known size under `rule`.
 *
 * @example
 * imageTokensForSize({ width: 1024, height: 1024 }, "tiles-512"); // 765
 */
export function imageTokensForSize(dimensions: ImageDimensions, rule: ImageTokenRule): number {
  const { width, height } = dimensions;
  if (rule === "tiles-512") {
    const fitted = scaled(dimensions, 2048 / Math.max(width, height));
    const shortened = scaled(fitted, 768 / Math.min(fitted.width, fitted.height));
    return 85 + 170 * Math.ceil(shortened.width / 512) * Math.ceil(shortened.height / 512);
  }
  if (rule === "tiles-768") {
    if (width <= 384 && height <= 384) return 258;
    return 258 * Math.ceil(width / 768) * Math.ceil(height / 768);
  }
  const byEdge = 1568 / Math.max(width, height);
  const byArea = Math.sqrt(1_150_000 / (width * height));
  const fitted = scaled(dimensions, Math.min(byEdge, byArea));
  return Math.max(1, Math.ceil((fitted.width * fitted.height) / 750));
}

/** What OpenAI bills for an image sent with `detail: "low"` under the 512-pixel tile rule, whatever its size. */
export const LOW_DETAIL_IMAGE_TOKENS = 85;

/**
 * Tokens of an image block: by its pixel size when the inline data reveals it, else `defaultImageTokens`. An
 * image with `detail: "low"` costs `LOW_DETAIL_IMAGE_TOKENS` under the `tiles-512` (OpenAI) rule.
 *
 * @example
 * imageTokens({ type: "image", mediaType: "image/png", url: "https://…" }, costs); // costs.defaultImageTokens
 */
export function imageTokens(block: ImageBlock, costs: MediaCosts): number {
  if (block.detail === "low" && costs.imageRule === "tiles-512") return LOW_DETAIL_IMAGE_TOKENS;
  const dimensions = block.data === undefined ? undefined : imageDimensions(block.data);
  return dimensions === undefined
    ? costs.defaultImageTokens
    : imageTokensForSize(dimensions, costs.imageRule);
}

const TEXT_MEDIA = /^(text\/|application\/(json|xml|x-yaml|yaml|javascript|x-sh|csv|sql|toml))/;

/** Decodes base64 to a binary string (one char per byte); undefined when it is not valid base64. */
function decodeBinary(data: string): string | undefined {
  try {
    return atob(data.replace(/\s+/g, ""));
  } catch {
    return undefined;
  }
}

/**
 * Pages of a PDF: occurrences of `/Type /Page` (not `/Pages`) in its bytes (as a binary string); 0 when none
 * can be seen (e.g. page objects inside compressed object streams).
 *
 * @example
 * pdfPageCount(atob(pdfBase64)); // 12
 */
export function pdfPageCount(binary: string): number {
  let pages = 0;
  for (const marker of ["/Type /Page", "/Type/Page"]) {
    let at = binary.indexOf(marker);
    while (at !== -1) {
      if (binary[at + marker.length] !== "s") pages++;
      at = binary.indexOf(marker, at + marker.length);
    }
  }
  return pages;
}

/**
 * Tokens of a file block. Text-like files are decoded and counted with `countText`; PDFs cost
 * `pdfPageTokens` per page (pages found in the file, else one page per 50 kB); anything else, or content
 * that is not inline, costs `defaultFileTokens`.
 *
 * @example
 * fileTokens({ type: "file", mediaType: "application/pdf", data }, costs, countText);
 */
export function fileTokens(block: FileBlock, costs: MediaCosts, countText: (text: string) => number): number {
  if (block.data === undefined) return costs.defaultFileTokens;
  const binary = decodeBinary(block.data);
  if (binary === undefined) return costs.defaultFileTokens;
  if (TEXT_MEDIA.test(block.mediaType)) {
    const bytes = Uint8Array.from(binary, (character) => character.charCodeAt(0));
    return countText(new TextDecoder().decode(bytes));
  }
  if (block.mediaType === "application/pdf") {
    const pages = pdfPageCount(binary) || Math.max(1, Math.round(binary.length / 50_000));
    return pages * costs.pdfPageTokens;
  }
  return costs.defaultFileTokens;
}
