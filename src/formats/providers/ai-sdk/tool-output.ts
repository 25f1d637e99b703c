import type { FileBlock, ImageBlock, JsonValue, ToolResultBlock } from "../../../model/message.ts";
import { mediaPlaceholder, mediaTypeFromUrl, providerFileUrl } from "../media.ts";
import { decodeToolResultText, encodeToolResultText } from "../tool-result-text.ts";
import { fromAiSdkFileData, toAiSdkFileData } from "./ai-sdk-media.ts";
import type { ParsedToolOutput } from "./ai-sdk-schema.ts";
import type { ToolResultOutput } from "./ai-sdk-types.ts";

type ContentOutput = Extract<ToolResultOutput, { type: "content" }>["value"];

/**
 * The AI SDK `output` of a tool result: `text` / `json`, `error-text` / `error-json` for failures, and
 * `content` (text plus files) when the result has attachments — `content` has no error variant, so a failed
 * result with attachments starts its text with `[tool error] `.
 */
export function toToolOutput(block: ToolResultBlock, at: string, placeholders: boolean): ToolResultOutput {
  const attachments = block.attachments ?? [];
  if (attachments.length === 0) {
    if (typeof block.content === "string")
      return { type: block.isError === true ? "error-text" : "text", value: block.content };
    return { type: block.isError === true ? "error-json" : "json", value: block.content };
  }
  const text = encodeToolResultText(block.content, block.isError, true);
  const value: ContentOutput = text === "" ? [] : [{ type: "text", text }];
  attachments.forEach((attachment, position) => {
    const data = toAiSdkFileData(attachment, `${at}.attachments[${position}]`, placeholders);
    if (data === undefined)
      value.push({ type: "text", text: mediaPlaceholder(attachment, "stored in the blob store") });
    else
      value.push({
        type: "file",
        data,
        mediaType: attachment.mediaType,
        ...(attachment.type === "file" &&
          attachment.filename !== undefined && { filename: attachment.filename }),
      });
  });
  return { type: "content", value };
}

type ContentPart = Extract<ParsedToolOutput, { type: "content" }>["value"][number];

function attachmentOf(part: Exclude<ContentPart, { type: "text" }>): ImageBlock | FileBlock {
  const kind = (mediaType: string): "image" | "file" => (mediaType.startsWith("image") ? "image" : "file");
  const reference = (fileId: string | Record<string, string>): Record<string, string> =>
    typeof fileId === "string" ? { openai: fileId } : fileId;
  switch (part.type) {
    case "file": {
      const named = part.filename === undefined ? {} : { filename: part.filename };
      return {
        type: kind(part.mediaType),
        mediaType: part.mediaType,
        ...fromAiSdkFileData(part.data),
        ...named,
      };
    }
    case "file-data":
      return {
        type: "file",
        mediaType: part.mediaType,
        data: part.data,
        ...(part.filename !== undefined && { filename: part.filename }),
      };
    case "image-data":
      return { type: "image", mediaType: part.mediaType, data: part.data };
    case "file-url":
      return {
        type: "file",
        mediaType: part.mediaType ?? mediaTypeFromUrl(part.url, "application/octet-stream"),
        url: part.url,
      };
    case "image-url":
      return { type: "image", mediaType: mediaTypeFromUrl(part.url, "image/*"), url: part.url };
    case "file-id":
      return {
        type: "file",
        mediaType: "application/octet-stream",
        url: providerFileUrl(reference(part.fileId)),
      };
    case "image-file-id":
      return { type: "image", mediaType: "image/*", url: providerFileUrl(reference(part.fileId)) };
    case "file-reference":
      return {
        type: "file",
        mediaType: "application/octet-stream",
        url: providerFileUrl(part.providerReference),
      };
    case "image-file-reference":
      return { type: "image", mediaType: "image/*", url: providerFileUrl(part.providerReference) };
  }
}

/** Reads an AI SDK tool `output` back into a ctxkit tool result's content, error flag and attachments. */
export function fromToolOutput(output: ParsedToolOutput): {
  content: string | JsonValue;
  isError?: true;
  attachments?: (ImageBlock | FileBlock)[];
} {
  switch (output.type) {
    case "text":
    case "json":
      return { content: output.value };
    case "error-text":
    case "error-json":
      return { content: output.value, isError: true };
    case "execution-denied":
      return { content: output.reason ?? "Tool call execution denied.", isError: true };
    case "content": {
      const text = output.value.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");
      const attachments = output.value.flatMap((part) => (part.type === "text" ? [] : [attachmentOf(part)]));
      return { ...decodeToolResultText(text, true), ...(attachments.length > 0 && { attachments }) };
    }
  }
}
