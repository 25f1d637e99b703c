import type { FileBlock, ImageBlock } from "../../../model/message.ts";
import {
  mediaPlaceholder,
  mediaSource,
  mediaTypeFromUrl,
  providerFileUrl,
  unresolvedReferenceError,
  unsupportedMediaError,
} from "../media.ts";
import type { ExportOptions } from "../options.ts";
import type { AnthropicDocumentBlock, AnthropicImageBlock, AnthropicTextBlock } from "./anthropic-message.ts";

const FORMAT = "Anthropic";

/** Plain text of base64 `data` when it decodes to UTF-8 and re-encodes to exactly the same base64. */
function plainText(data: string): string | undefined {
  const text = Buffer.from(data, "base64").toString("utf8");
  return Buffer.from(text, "utf8").toString("base64") === data ? text : undefined;
}

/**
 * The Anthropic block for an image or file: images as `image`, files as `document` (plain-text files as a
 * `text` source, the file name as `title`), provider files by `file_id`.
 */
export function toAnthropicMedia(
  block: ImageBlock | FileBlock,
  at: string,
  options: ExportOptions,
): AnthropicImageBlock | AnthropicDocumentBlock | AnthropicTextBlock {
  const source = mediaSource(block);
  if (source.kind === "ref") {
    if (options.references !== "placeholder") throw unresolvedReferenceError(at, source.ref);
    return { type: "text", text: mediaPlaceholder(block, `stored as ${source.ref}`) };
  }
  let fileId: string | undefined;
  if (source.kind === "provider-file") {
    fileId = source.references["anthropic"];
    if (fileId === undefined) throw unsupportedMediaError(at, FORMAT, "a file uploaded to another provider");
  }
  if (block.type === "image") {
    if (source.kind === "data")
      return { type: "image", source: { type: "base64", media_type: block.mediaType, data: source.data } };
    if (source.kind === "url") return { type: "image", source: { type: "url", url: source.url } };
    return { type: "image", source: { type: "file", file_id: fileId! } };
  }
  const title = block.filename === undefined ? {} : { title: block.filename };
  if (source.kind === "url") return { type: "document", source: { type: "url", url: source.url }, ...title };
  if (source.kind === "provider-file")
    return { type: "document", source: { type: "file", file_id: fileId! }, ...title };
  const text = block.mediaType === "text/plain" ? plainText(source.data) : undefined;
  if (text !== undefined)
    return { type: "document", source: { type: "text", media_type: "text/plain", data: text }, ...title };
  return {
    type: "document",
    source: { type: "base64", media_type: block.mediaType, data: source.data },
    ...title,
  };
}

/** The ctxkit block for an Anthropic image or document block. */
export function fromAnthropicMedia(
  block: AnthropicImageBlock | AnthropicDocumentBlock,
): ImageBlock | FileBlock {
  const { source } = block;
  if (block.type === "image") {
    if (source.type === "base64") return { type: "image", mediaType: source.media_type, data: source.data };
    if (source.type === "url")
      return { type: "image", mediaType: mediaTypeFromUrl(source.url, "image/*"), url: source.url };
    if (source.type === "file")
      return { type: "image", mediaType: "image/*", url: providerFileUrl({ anthropic: source.file_id }) };
  }
  const named = "title" in block && block.title !== undefined ? { filename: block.title } : {};
  switch (source.type) {
    case "base64":
      return { type: "file", mediaType: source.media_type, data: source.data, ...named };
    case "text":
      return {
        type: "file",
        mediaType: "text/plain",
        data: Buffer.from(source.data, "utf8").toString("base64"),
        ...named,
      };
    case "url":
      return {
        type: "file",
        mediaType: mediaTypeFromUrl(source.url, "application/pdf"),
        url: source.url,
        ...named,
      };
    case "file":
      return {
        type: "file",
        mediaType: mediaTypeFromUrl(block.type === "document" ? (block.title ?? "") : "", "application/pdf"),
        url: providerFileUrl({ anthropic: source.file_id }),
        ...named,
      };
  }
}
