import type { JsonValue } from "../../../model/message.ts";
import type { CacheTtl } from "./cache-breakpoints.ts";

/** A prompt-cache breakpoint: the prefix up to and including the block that carries it is cached. */
export interface AnthropicCacheControl {
  type: "ephemeral";
  /** Default `5m`. */
  ttl?: CacheTtl;
}

/** A text block. */
export interface AnthropicTextBlock {
  type: "text";
  text: string;
  cache_control?: AnthropicCacheControl;
}

/** Where an image's bytes are. */
export type AnthropicImageSource =
  | { type: "base64"; media_type: string; data: string }
  | { type: "url"; url: string }
  | { type: "file"; file_id: string };

/** An image block. */
export interface AnthropicImageBlock {
  type: "image";
  source: AnthropicImageSource;
  cache_control?: AnthropicCacheControl;
}

/** Where a document's content is (`text` sources hold plain text, not base64). */
export type AnthropicDocumentSource =
  | { type: "base64"; media_type: string; data: string }
  | { type: "text"; media_type: "text/plain"; data: string }
  | { type: "url"; url: string }
  | { type: "file"; file_id: string };

/** A document block (PDF or plain text); `title` carries the file name. */
export interface AnthropicDocumentBlock {
  type: "document";
  source: AnthropicDocumentSource;
  title?: string;
  cache_control?: AnthropicCacheControl;
}

/** Extended thinking, with the signature Anthropic needs to accept it back. */
export interface AnthropicThinkingBlock {
  type: "thinking";
  thinking: string;
  signature: string;
}

/** Thinking Anthropic withheld; `data` is opaque. */
export interface AnthropicRedactedThinkingBlock {
  type: "redacted_thinking";
  data: string;
}

/** The `provider` of the opaque blocks that hold Anthropic's own blocks (`OpaqueBlock`). */
export const ANTHROPIC_PROVIDER = "anthropic";

/** Metadata key under which a message keeps the fields of its `tool_use` blocks that are not interpreted. */
export const BLOCK_EXTRAS_KEY = "anthropic.blocks";

/**
 * Metadata key marking a user message that Anthropic sent as a list holding one text block, so it is sent back
 * as that list rather than as the equivalent plain string.
 */
export const CONTENT_LIST_KEY = "anthropic.contentList";

/**
 * Metadata key marking a system message that stood inside Anthropic's `messages` (a mid-conversation system
 * message, as Claude Code sends), so it is sent back there rather than moved into the top-level `system`.
 */
export const INLINE_SYSTEM_KEY = "anthropic.inlineSystem";

/** A tool call (with any further fields Anthropic sent, such as `caller`). */
export interface AnthropicToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: { [key: string]: JsonValue };
  [extra: string]: unknown;
}

/** A tool named by a tool-search result (the API loads its definition for the model). */
export interface AnthropicToolReferenceBlock {
  type: "tool_reference";
  tool_name: string;
  [extra: string]: unknown;
}

/**
 * Metadata key under which a tool message keeps the parts of its `tool_result` content that are neither text nor
 * media (tool references, search results, newer kinds), with their positions, so they are sent back where they
 * were.
 */
export const RESULT_PARTS_KEY = "anthropic.resultParts";

/** A tool result, sent in a user message. */
export interface AnthropicToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content:
    | string
    | (
        | AnthropicTextBlock
        | AnthropicImageBlock
        | AnthropicDocumentBlock
        | AnthropicToolReferenceBlock
        | AnthropicOtherBlock
      )[];
  is_error?: boolean;
  cache_control?: AnthropicCacheControl;
}

/**
 * A block ctxkit does not model, sent back as it came: a server tool's call and result (`server_tool_use`,
 * `web_search_tool_result`, `code_execution_tool_result`, `mcp_tool_use`, …), a `search_result`, a document ctxkit
 * cannot read, or a newer block type. ctxkit keeps it as an opaque block of provider `anthropic`.
 */
export interface AnthropicOtherBlock {
  type: string;
  cache_control?: AnthropicCacheControl;
  [field: string]: unknown;
}

/** Blocks of a user message. */
export type AnthropicUserBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicDocumentBlock
  | AnthropicToolResultBlock
  | AnthropicOtherBlock;

/** Blocks of an assistant message. */
export type AnthropicAssistantBlock =
  | AnthropicTextBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock
  | AnthropicToolUseBlock
  | AnthropicOtherBlock;

/** A user message. */
export interface AnthropicUserMessage {
  role: "user";
  content: string | AnthropicUserBlock[];
}

/** An assistant message. */
export interface AnthropicAssistantMessage {
  role: "assistant";
  content: AnthropicAssistantBlock[];
}

/** A system message inside `messages` (mid-conversation instructions; the top-level `system` comes first). */
export interface AnthropicSystemMessage {
  role: "system";
  content: string | AnthropicTextBlock[];
}

/** Any Anthropic message. */
export type AnthropicMessage = AnthropicUserMessage | AnthropicAssistantMessage | AnthropicSystemMessage;

/** The conversation part of an Anthropic Messages request: the separate `system` and the `messages`. */
export interface AnthropicPayload {
  system?: string | AnthropicTextBlock[];
  messages: AnthropicMessage[];
}

/** A client tool definition (other fields, such as a server tool's `type`, pass through). */
export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: JsonValue;
  cache_control?: AnthropicCacheControl;
  [extra: string]: unknown;
}

/** A Messages payload with the request's tool definitions, ready for the remaining request fields. */
export interface AnthropicRequestPayload extends AnthropicPayload {
  tools?: AnthropicTool[];
}
