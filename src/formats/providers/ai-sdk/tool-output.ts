import type { FileBlock, ImageBlock, JsonValue, Message, ToolResultBlock } from "../../../model/message.ts";
import { mediaTypeFromUrl, providerFileUrl } from "../media.ts";
import { attachmentPlaces, orderResultParts } from "../result-part-order.ts";
import { joinTextParts, textLayout } from "../text-parts.ts";
import { decodeToolResultText, encodeToolResultText } from "../tool-result-text.ts";
import { detailFromOptions, fromAiSdkFileData, toAiSdkMediaPart } from "./ai-sdk-media.ts";
import type { ParsedToolOutput } from "./ai-sdk-schema.ts";
import type { ToolResultOutput } from "./ai-sdk-types.ts";
import {
  OUTPUT_OPTIONS_KEY,
  partOptionsMetadata,
  recordedOptions,
  withoutImageDetail,
  withRecordedOptions,
} from "./part-options.ts";

type ContentOutput = Extract<ToolResultOutput, { type: "content" }>["value"];

/**
 * The AI SDK `output` of a tool result: `text` / `json`, `error-text` / `error-json` for failures, and
 * `content` (text plus files) when the result has attachments — `content` has no error variant, so a failed
 * result with attachments starts its text with `[tool error] `. The `providerOptions` `message` recorded for the
 * output (`toolOutputOptions`) go back on it, and on the parts of a `content` output while they still fit.
 */
export function toToolOutput(
  block: ToolResultBlock,
  message: Message,
  at: string,
  placeholders: boolean,
): ToolResultOutput {
  const attachments = block.attachments ?? [];
  const layout = textLayout(
    encodeToolResultText(block.content, block.isError, true),
    message,
    attachments.length > 0,
  );
  if (typeof layout === "string") {
    const options = recordedOptions(message, OUTPUT_OPTIONS_KEY);
    if (typeof block.content === "string")
      return { type: block.isError === true ? "error-text" : "text", value: block.content, ...options };
    return { type: block.isError === true ? "error-json" : "json", value: block.content, ...options };
  }
  const media = attachments.map((attachment, position): ContentOutput[number] =>
    toAiSdkMediaPart(attachment, `${at}.attachments[${position}]`, placeholders),
  );
  const texts = layout.map((text): ContentOutput[number] => ({ type: "text", text }));
  return { type: "content", value: withRecordedOptions(orderResultParts(texts, media, message), message) };
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

/**
 * Reads an AI SDK tool `output` back into a ctxkit tool result's content, error flag and attachments (an image
 * part's `providerOptions.openai.imageDetail` becomes the attachment's detail level).
 */
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
      const texts = output.value.flatMap((part) => (part.type === "text" ? [part.text] : []));
      const attachments = output.value.flatMap((part) => {
        if (part.type === "text") return [];
        const attachment = attachmentOf(part);
        // An image keeps its detail level as a user message's image does.
        return [
          attachment.type === "image"
            ? { ...attachment, ...detailFromOptions(part.providerOptions) }
            : attachment,
        ];
      });
      const { text } = joinTextParts(texts, attachments.length > 0);
      return { ...decodeToolResultText(text, true), ...(attachments.length > 0 && { attachments }) };
    }
  }
}

/**
 * The metadata a tool message imported from `output` needs to send it back part for part: the lengths of its
 * text parts and the places of its files (see `joinTextParts`, `attachmentPlaces`), or `undefined` when the
 * plain layout rebuilds it (and for outputs that are not a `content` list).
 */
export function toolOutputLayout(output: ParsedToolOutput): { [key: string]: JsonValue } | undefined {
  if (output.type !== "content") return undefined;
  const texts = output.value.flatMap((part) => (part.type === "text" ? [part.text] : []));
  const layout = {
    ...joinTextParts(texts, texts.length < output.value.length).metadata,
    ...attachmentPlaces(output.value.map((part) => part.type !== "text")),
  };
  return Object.keys(layout).length > 0 ? layout : undefined;
}

/**
 * The metadata keeping the `providerOptions` of a tool `output` that ctxkit's tool result has no field for: the
 * output's own (`text`, `json` and error outputs) and those of a `content` output's parts, less an image's
 * detail level (the attachment's `detail`). `undefined` when there are none.
 */
export function toolOutputOptions(output: ParsedToolOutput): { [key: string]: JsonValue } | undefined {
  if (output.type !== "content")
    return output.providerOptions === undefined
      ? undefined
      : { [OUTPUT_OPTIONS_KEY]: output.providerOptions as { [key: string]: JsonValue } };
  return partOptionsMetadata(output.value, (index, options) => {
    const part = output.value[index]!;
    const image = part.type !== "text" && attachmentOf(part).type === "image";
    return withoutImageDetail(options, image && detailFromOptions(options).detail !== undefined);
  });
}
