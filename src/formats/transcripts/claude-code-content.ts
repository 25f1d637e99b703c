import type { ContentBlock, FileBlock, ImageBlock, JsonValue, ToolResultBlock } from "../../model/message.ts";
import { claudeBlockSchemas } from "./claude-code-records.ts";
import { expectShape, type RecordLocation } from "./record-shape.ts";

type RawBlock = { type: string; [key: string]: unknown };

const expectedBlock = "an Anthropic content block";

/** Content blocks converted from one record, plus the types ctxkit has no block for. */
export interface ConvertedBlocks {
  readonly blocks: ContentBlock[];
  readonly unsupported: string[];
}

/**
 * Converts the blocks of an assistant response: text, thinking (kept with its signature), redacted thinking
 * and tool calls. Other block types are reported in `unsupported`.
 *
 * @example
 * convertAssistantBlocks([{ type: "text", text: "hi" }], { source, line }).blocks; // [{ type: "text", text: "hi" }]
 */
export function convertAssistantBlocks(raw: readonly RawBlock[], location: RecordLocation): ConvertedBlocks {
  const blocks: ContentBlock[] = [];
  const unsupported: string[] = [];
  for (const block of raw) {
    if (block.type === "text") {
      blocks.push({
        type: "text",
        text: expectShape(claudeBlockSchemas.text, block, location, expectedBlock).text,
      });
    } else if (block.type === "thinking") {
      const thinking = expectShape(claudeBlockSchemas.thinking, block, location, expectedBlock);
      blocks.push({
        type: "reasoning",
        text: thinking.thinking,
        ...(thinking.signature ? { signature: thinking.signature, signedBy: "anthropic" as const } : {}),
      });
    } else if (block.type === "redacted_thinking") {
      const redacted = expectShape(claudeBlockSchemas.redacted_thinking, block, location, expectedBlock);
      // As from-anthropic keeps it: the opaque data is what goes back as `redacted_thinking`.
      blocks.push({
        type: "reasoning",
        text: "",
        redacted: true,
        signature: redacted.data,
        signedBy: "anthropic",
      });
    } else if (block.type === "tool_use") {
      const call = expectShape(claudeBlockSchemas.tool_use, block, location, expectedBlock);
      // The parsed input, not zod's copy: zod rebuilds objects and drops "__proto__" keys.
      blocks.push({ type: "tool-call", id: call.id, name: call.name, input: block["input"] as JsonValue });
    } else {
      unsupported.push(block.type);
    }
  }
  return { blocks, unsupported };
}

/**
 * Converts the non-tool-result blocks of a user record: text, images and documents.
 *
 * @example
 * convertUserBlocks([{ type: "text", text: "fix it" }], { source, line }).blocks;
 */
export function convertUserBlocks(raw: readonly RawBlock[], location: RecordLocation): ConvertedBlocks {
  const blocks: ContentBlock[] = [];
  const unsupported: string[] = [];
  for (const block of raw) {
    if (block.type === "tool_result") continue;
    const converted = convertMediaOrText(block, location);
    if (converted) blocks.push(converted);
    else unsupported.push(block.type);
  }
  return { blocks, unsupported };
}

/**
 * Converts a `tool_result` block. The model saw `content`: text items are joined by newlines, images become
 * attachments, any other item kind (e.g. `tool_reference`) keeps the whole list as structured JSON.
 *
 * @example
 * convertToolResult({ type: "tool_result", tool_use_id: "toolu_1", content: "ok" }, "Bash", location);
 */
export function convertToolResult(
  raw: RawBlock,
  toolName: string,
  location: RecordLocation,
): ToolResultBlock {
  const result = expectShape(claudeBlockSchemas.tool_result, raw, location, expectedBlock);
  const isError = result.is_error === true ? { isError: true } : {};
  const content = result.content ?? "";
  if (typeof content === "string") {
    return { type: "tool-result", callId: result.tool_use_id, toolName, content, ...isError };
  }
  const texts: string[] = [];
  const attachments: (ImageBlock | FileBlock)[] = [];
  let structured = false;
  for (const item of content) {
    if (item.type === "text")
      texts.push(expectShape(claudeBlockSchemas.text, item, location, expectedBlock).text);
    else if (item.type === "image" || item.type === "document") {
      const media = convertMediaOrText(item, location);
      if (media?.type === "image" || media?.type === "file") attachments.push(media);
    } else structured = true;
  }
  return {
    type: "tool-result",
    callId: result.tool_use_id,
    toolName,
    content: structured ? (content as JsonValue) : texts.join("\n"),
    ...isError,
    ...(attachments.length > 0 && !structured ? { attachments } : {}),
  };
}

function convertMediaOrText(block: RawBlock, location: RecordLocation): ContentBlock | undefined {
  if (block.type === "text") {
    return { type: "text", text: expectShape(claudeBlockSchemas.text, block, location, expectedBlock).text };
  }
  if (block.type === "image") {
    const { source } = expectShape(claudeBlockSchemas.image, block, location, expectedBlock);
    return { type: "image", mediaType: source.media_type ?? "image/*", ...sourceOf(source) };
  }
  if (block.type === "document") {
    const { source, title } = expectShape(claudeBlockSchemas.document, block, location, expectedBlock);
    // Plain-text documents carry their text in `data`; ctxkit file blocks hold base64, so keep them as text.
    if (source.type === "text" && source.data !== undefined) return { type: "text", text: source.data };
    return {
      type: "file",
      mediaType: source.media_type ?? "application/pdf",
      ...(title ? { filename: title } : {}),
      ...sourceOf(source),
    };
  }
  return undefined;
}

function sourceOf(source: { type: string; data?: string | undefined; url?: string | undefined }) {
  if (source.url !== undefined) return { url: source.url };
  return { data: source.data ?? "" };
}
