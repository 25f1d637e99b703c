import type { FileBlock, ImageBlock } from "../../../model/message.ts";
import {
  imageDetail,
  mediaPlaceholder,
  mediaSource,
  mediaTypeFromUrl,
  parseDataUrl,
  providerFileUrl,
  toDataUrl,
  unresolvedReferenceError,
  unsupportedMediaError,
} from "../media.ts";
import type { ExportOptions } from "../options.ts";
import type { ParsedResponsesContent } from "./openai-responses-schema.ts";
import type { ResponsesInputContent } from "./openai-responses-item.ts";

/** The Responses content part for an image or file (`input_image` / `input_file`). */
export function toResponsesMedia(
  block: ImageBlock | FileBlock,
  at: string,
  options: ExportOptions,
): ResponsesInputContent {
  const source = mediaSource(block);
  if (source.kind === "ref") {
    if (options.references !== "placeholder") throw unresolvedReferenceError(at, source.ref);
    return { type: "input_text", text: mediaPlaceholder(block, `stored as ${source.ref}`) };
  }
  const fileId = source.kind === "provider-file" ? source.references["openai"] : undefined;
  if (source.kind === "provider-file" && fileId === undefined)
    throw unsupportedMediaError(at, "OpenAI Responses", "a file uploaded to another provider");
  if (block.type === "image") {
    const detail = block.detail ?? "auto";
    if (source.kind === "data")
      return { type: "input_image", detail, image_url: toDataUrl(block.mediaType, source.data) };
    if (source.kind === "url") return { type: "input_image", detail, image_url: source.url };
    return { type: "input_image", detail, file_id: fileId! };
  }
  const named = block.filename === undefined ? {} : { filename: block.filename };
  if (source.kind === "data")
    return { type: "input_file", file_data: toDataUrl(block.mediaType, source.data), ...named };
  if (source.kind === "url") return { type: "input_file", file_url: source.url, ...named };
  return { type: "input_file", file_id: fileId!, ...named };
}

/** The ctxkit block for an `input_image` or `input_file` part. */
export function fromResponsesMedia(
  part: Exclude<ParsedResponsesContent, { type: "input_text" }>,
): ImageBlock | FileBlock {
  if (part.type === "input_image") {
    // "auto" is the API's default and what `toResponsesMedia` sends when no detail is known.
    const detail = imageDetail(part.detail, "auto");
    if (part.image_url) {
      const inline = parseDataUrl(part.image_url);
      if (inline) return { type: "image", mediaType: inline.mediaType, data: inline.data, ...detail };
      return {
        type: "image",
        mediaType: mediaTypeFromUrl(part.image_url, "image/*"),
        url: part.image_url,
        ...detail,
      };
    }
    return {
      type: "image",
      mediaType: "image/*",
      url: providerFileUrl({ openai: part.file_id ?? "" }),
      ...detail,
    };
  }
  const named = part.filename === undefined ? {} : { filename: part.filename };
  if (part.file_data !== undefined) {
    const inline = parseDataUrl(part.file_data) ?? { mediaType: "application/pdf", data: part.file_data };
    return { type: "file", mediaType: inline.mediaType, data: inline.data, ...named };
  }
  if (part.file_url !== undefined)
    return {
      type: "file",
      mediaType: mediaTypeFromUrl(part.file_url, "application/pdf"),
      url: part.file_url,
      ...named,
    };
  const mediaType = mediaTypeFromUrl(part.filename ?? "", "application/octet-stream");
  return { type: "file", mediaType, url: providerFileUrl({ openai: part.file_id ?? "" }), ...named };
}
