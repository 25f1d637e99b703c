import type {
  ContentBlock,
  FileBlock,
  ImageBlock,
  JsonValue,
  Message,
  OpaqueBlock,
  ToolResultBlock,
} from "../../../model/message.ts";
import { buildMessages, userDraft, type MessageDraft } from "../message-builder.ts";
import type { ImportOptions } from "../options.ts";
import { attachmentPlaces } from "../result-part-order.ts";
import { joinTextParts } from "../text-parts.ts";
import { decodeToolResultText } from "../tool-result-text.ts";
import { validatePayload } from "../validate-payload.ts";
import { ExtrasCollector, extrasOf } from "../item-extras.ts";
import { fromAnthropicMedia } from "./anthropic-media.ts";
import {
  ANTHROPIC_PROVIDER,
  BLOCK_EXTRAS_KEY,
  CONTENT_LIST_KEY,
  INLINE_SYSTEM_KEY,
  RESULT_PARTS_KEY,
} from "./anthropic-message.ts";
import { anthropicPayloadSchema, type ParsedAnthropicPayload } from "./anthropic-schema.ts";

type ParsedMessage = ParsedAnthropicPayload["messages"][number];
type ParsedUserBlock = Exclude<Extract<ParsedMessage, { role: "user" }>["content"], string>[number];
type ParsedAssistantBlock = Exclude<Extract<ParsedMessage, { role: "assistant" }>["content"], string>[number];
type ParsedToolResult = Extract<ParsedUserBlock, { type: "tool_result" }>;

function assistantBlock(block: ParsedAssistantBlock): ContentBlock {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "thinking":
      return {
        type: "reasoning",
        text: block.thinking,
        ...(block.signature !== undefined && { signature: block.signature, signedBy: "anthropic" as const }),
      };
    case "redacted_thinking":
      return { type: "reasoning", text: "", redacted: true, signature: block.data, signedBy: "anthropic" };
    case "tool_use":
      return { type: "tool-call", id: block.id, name: block.name, input: block.input };
    case "opaque":
      return opaqueBlock(block.data);
  }
}

/**
 * A block ctxkit does not model (a server tool's call or result, …), kept as it came but for its `cache_control`,
 * which directs one request's caching (ctxkit places its own breakpoints).
 */
function opaqueBlock(data: { readonly [key: string]: JsonValue }): OpaqueBlock {
  return { type: "opaque", provider: ANTHROPIC_PROVIDER, data: withoutMarker(data) };
}

function withoutMarker(data: { readonly [key: string]: JsonValue }): { [key: string]: JsonValue } {
  const { cache_control: _marker, ...kept } = data;
  return kept;
}

function toolDraft(block: ParsedToolResult, toolNames: ReadonlyMap<string, string>): MessageDraft {
  if (typeof block.content !== "object")
    return { role: "tool", content: [toolResult(block, block.content ?? "", [], toolNames)] };
  const attachments = block.content.flatMap((part) =>
    part.type === "image" || part.type === "document" ? [fromAnthropicMedia(part)] : [],
  );
  const texts = block.content.flatMap((part) => (part.type === "text" ? [part.text] : []));
  // Parts that are neither text nor media (a tool search's tool references, search results, newer kinds) are
  // kept as they came, with their places.
  const others = block.content.flatMap((part, at) =>
    part.type === "opaque" ? [{ at, block: withoutMarker(part.data) }] : [],
  );
  const joined = joinTextParts(texts, attachments.length > 0);
  const media = block.content.flatMap((part) =>
    part.type === "opaque" ? [] : [part.type === "image" || part.type === "document"],
  );
  const metadata = {
    ...joined.metadata,
    ...attachmentPlaces(media),
    ...(others.length > 0 && { [RESULT_PARTS_KEY]: others }),
  };
  const content = [toolResult(block, joined.text, attachments, toolNames)];
  return { role: "tool", content, ...(Object.keys(metadata).length > 0 && { metadata }) };
}

function toolResult(
  block: ParsedToolResult,
  text: string,
  attachments: (ImageBlock | FileBlock)[],
  toolNames: ReadonlyMap<string, string>,
): ToolResultBlock {
  const { content } = decodeToolResultText(text, false);
  return {
    type: "tool-result",
    callId: block.tool_use_id,
    toolName: toolNames.get(block.tool_use_id) ?? "",
    content,
    ...(block.is_error !== undefined && { isError: block.is_error }),
    ...(attachments.length > 0 && { attachments }),
  };
}

function userDrafts(
  message: Extract<ParsedMessage, { role: "user" }>,
  toolNames: ReadonlyMap<string, string>,
): MessageDraft[] {
  if (typeof message.content === "string") return [userDraft([{ type: "text", text: message.content }])];
  const drafts: MessageDraft[] = [];
  const rest: (ContentBlock | ImageBlock | FileBlock)[] = [];
  const extras = new ExtrasCollector(BLOCK_EXTRAS_KEY);
  for (const block of message.content) {
    if (block.type === "tool_result") drafts.push(toolDraft(block, toolNames));
    else if (block.type === "opaque") rest.push(opaqueBlock(block.data));
    else if (block.type === "text") rest.push({ type: "text", text: block.text });
    else {
      // A document's citations and context settings are kept by its place, to be sent back with it.
      if (block.type === "document")
        extras.add(`document:${rest.length}`, extrasOf(block, ["type", "source", "title", "cache_control"]));
      rest.push(fromAnthropicMedia(block));
    }
  }
  if (rest.length === 0) return drafts;
  const built = userDraft(rest);
  const metadata = built.kind === undefined ? extras.metadata(built.metadata) : built.metadata;
  const draft = { ...built, ...(metadata !== undefined && { metadata }) };
  // A lone text block would be sent back as a plain string; remember that it came as a list.
  const listed = drafts.length === 0 && rest.length === 1 && rest[0]?.type === "text";
  drafts.push(listed ? { ...draft, metadata: { ...draft.metadata, [CONTENT_LIST_KEY]: true } } : draft);
  return drafts;
}

/**
 * Converts an Anthropic Messages payload (`{ system, messages }`, or a whole request body) to ctxkit messages.
 * `system` becomes one system message; a user message is split into one tool message per `tool_result`
 * (`is_error` → `isError`, images and documents in its content → attachments, their places recorded, compact JSON text → JSON), plus a
 * user message for its other blocks; `thinking` and `redacted_thinking` become reasoning with the signature
 * (redacted data is kept as the signature). Blocks ctxkit does not model — a server tool's call and result
 * (`server_tool_use`, `web_search_tool_result`, code execution, MCP, …), `search_result`, a document with a `content`
 * source, newer types — become opaque blocks (provider `anthropic`) at their place, kept as they came but for
 * `cache_control`; such parts of a `tool_result`'s content are kept in the tool message's metadata with their
 * places. A document's settings ctxkit does not model (`citations`, `context`) are kept in the message's metadata
 * by its place. A system message inside `messages` stays a system message at its place
 * (marked so `toAnthropic` sends it back there). Ids, sequence numbers, turns and times are filled in from `options`.
 *
 * @example
 * const messages = fromAnthropic({ system: "Be brief.", messages: [{ role: "user", content: "Hi" }] });
 */
export function fromAnthropic(payload: unknown, options: ImportOptions = {}): Message[] {
  const parsed = validatePayload(
    anthropicPayloadSchema,
    Array.isArray(payload) ? { messages: payload } : payload,
    "payload",
    "Anthropic messages",
  );
  const drafts: MessageDraft[] = [];
  if (parsed.system !== undefined) {
    const texts =
      typeof parsed.system === "string" ? [parsed.system] : parsed.system.map((block) => block.text);
    drafts.push({ role: "system", content: texts.map((text) => ({ type: "text", text })) });
  }
  const toolNames = new Map<string, string>();
  for (const message of parsed.messages) {
    if (message.role === "user") {
      drafts.push(...userDrafts(message, toolNames));
      continue;
    }
    if (message.role === "system") {
      const listed = typeof message.content !== "string";
      const texts =
        typeof message.content === "string" ? [message.content] : message.content.map((block) => block.text);
      drafts.push({
        role: "system",
        content: texts.map((text) => ({ type: "text", text })),
        metadata: { [INLINE_SYSTEM_KEY]: true, ...(listed && { [CONTENT_LIST_KEY]: true }) },
      });
      continue;
    }
    const extras = new ExtrasCollector(BLOCK_EXTRAS_KEY);
    if (typeof message.content !== "string")
      for (const block of message.content)
        if (block.type === "tool_use")
          // cache_control directs one request's caching; it is not part of the call (ctxkit places its own).
          extras.add(
            `tool_use:${block.id}`,
            extrasOf(block, ["type", "id", "name", "input", "cache_control"]),
          );
    const content =
      typeof message.content === "string"
        ? message.content === ""
          ? []
          : [{ type: "text" as const, text: message.content }]
        : message.content.map(assistantBlock);
    for (const block of content) if (block.type === "tool-call") toolNames.set(block.id, block.name);
    const metadata = extras.metadata();
    drafts.push({ role: "assistant", content, ...(metadata !== undefined && { metadata }) });
  }
  return buildMessages(drafts, options);
}
