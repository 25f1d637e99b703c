import type { FileBlock, ImageBlock } from "../../../model/message.ts";
import { mediaPlaceholder, mediaSource, unresolvedReferenceError, unsupportedMediaError } from "../media.ts";
import type { ExportOptions } from "../options.ts";
import type { GeminiFileDataPart, GeminiInlineDataPart, GeminiTextPart } from "./gemini-content.ts";

/**
 * The Gemini part for an image or file: `inlineData` for base64, `fileData` for a URL (or a Google Files API
 * id). Gemini has no file names, so `filename` is not sent.
 */
export function toGeminiMedia(
  block: ImageBlock | FileBlock,
  at: string,
  options: ExportOptions,
): GeminiInlineDataPart | GeminiFileDataPart | GeminiTextPart {
  const source = mediaSource(block);
  switch (source.kind) {
    case "data":
      return { inlineData: { mimeType: block.mediaType, data: source.data } };
    case "url":
      return { fileData: { mimeType: block.mediaType, fileUri: source.url } };
    case "provider-file": {
      const uri = source.references["google"];
      if (uri === undefined) throw unsupportedMediaError(at, "Gemini", "a file uploaded to another provider");
      return { fileData: { mimeType: block.mediaType, fileUri: uri } };
    }
    case "ref":
      if (options.references !== "placeholder") throw unresolvedReferenceError(at, source.ref);
      return { text: mediaPlaceholder(block, `stored as ${source.ref}`) };
  }
}

/** The ctxkit block for a Gemini media part: `image/*` media types become images, the rest files. */
export function fromGeminiMedia(
  part:
    | { inlineData: { mimeType: string; data: string } }
    | { fileData: { mimeType?: string | undefined; fileUri: string } },
): ImageBlock | FileBlock {
  const mediaType =
    "inlineData" in part ? part.inlineData.mimeType : (part.fileData.mimeType ?? "application/octet-stream");
  const source = "inlineData" in part ? { data: part.inlineData.data } : { url: part.fileData.fileUri };
  return { type: mediaType.startsWith("image/") ? "image" : "file", mediaType, ...source };
}
