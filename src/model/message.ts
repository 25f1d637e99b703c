/**
 * The provider-neutral message model. Plain, JSON-serialisable data: every message and block can be written
 * with `JSON.stringify` and read back with the schemas in `schemas.ts`.
 */

/** Version of the serialised message format. Stored with every export so older data can be migrated. */
export const MESSAGE_FORMAT_VERSION = 1;

/** Any JSON value. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Who wrote a message. Tool results live in `tool` messages, one result per message. */
export type Role = "system" | "user" | "assistant" | "tool";

/** Plain text. */
export interface TextBlock {
  readonly type: "text";
  readonly text: string;
  /**
   * True when the text is the model's refusal to answer (OpenAI's `refusal`), so it goes back to OpenAI as a
   * refusal; formats without refusals send it as plain text.
   */
  readonly refusal?: true;
}

/**
 * Model reasoning ("thinking"). `signature` and `providerData` are opaque provider material (Anthropic's
 * signature, OpenAI's encrypted content) kept as-is so a conversation can be sent back to the same provider.
 */
export interface ReasoningBlock {
  readonly type: "reasoning";
  readonly text: string;
  readonly signature?: string;
  /**
   * Whose signature it is (`anthropic`: thinking / redacted data, `google`: a Gemini thought signature). A
   * provider refuses another's signature, so each exporter sends only its own. Absent: not known.
   */
  readonly signedBy?: "anthropic" | "google";
  /** True when the provider withheld the text (Anthropic redacted thinking, OpenAI encrypted reasoning). */
  readonly redacted?: boolean;
  readonly providerData?: JsonValue;
}

/** A tool call made by the assistant. `input` is the parsed arguments (a string for free-form tools). */
export interface ToolCallBlock {
  readonly type: "tool-call";
  readonly id: string;
  readonly name: string;
  /** The arguments; a string for a free-form (custom) tool's input, or function arguments that did not parse. */
  readonly input: JsonValue;
  /**
   * True for a function call whose arguments were not JSON (a model cut off mid-call): `input` is their text, and
   * the call goes back to the provider as the function call it was, not as a free-form tool's.
   */
  readonly unparsed?: true;
}

/**
 * How closely the model should look at an image (OpenAI's `detail`): `low` costs a fixed, small number of tokens,
 * `high` reads it tile by tile, `original` (newer OpenAI models) keeps its full resolution, `auto` lets the
 * provider choose. Formats without such a setting ignore it.
 */
export type ImageDetail = "auto" | "low" | "high" | "original";

/** Image content: inline base64 `data`, a `url`, or a `ref` into the blob store. */
export interface ImageBlock {
  readonly type: "image";
  readonly mediaType: string;
  readonly data?: string;
  readonly url?: string;
  readonly ref?: string;
  /** The detail level the image was sent with (OpenAI); absent: the provider's default. */
  readonly detail?: ImageDetail;
}

/** A file (PDF, audio, …): inline base64 `data`, a `url`, or a `ref` into the blob store. */
export interface FileBlock {
  readonly type: "file";
  readonly mediaType: string;
  readonly filename?: string;
  readonly data?: string;
  readonly url?: string;
  readonly ref?: string;
}

/** A tool's result, answering the tool call whose id is `callId`. */
export interface ToolResultBlock {
  readonly type: "tool-result";
  readonly callId: string;
  readonly toolName: string;
  /** What the model sees: text, or structured JSON. */
  readonly content: string | JsonValue;
  readonly isError?: boolean;
  /** Images or files returned with the result (e.g. screenshots). */
  readonly attachments?: readonly (ImageBlock | FileBlock)[];
  /** A pre-computed short form; governance may send it instead of `content` for older results. */
  readonly compactSummary?: string;
  /** Set when the full output was moved to the blob store; `content` then holds the preview. */
  readonly offloadRef?: string;
}

/**
 * A provider's own content that ctxkit does not model, kept exactly as the provider sent it so the conversation
 * can go back to that provider unchanged: Anthropic's server-tool blocks (`server_tool_use` and
 * `web_search_tool_result`, code execution, MCP, …), a provider's newer block types, OpenAI Responses' built-in
 * tool items. Only the exporter of `provider` sends it back, at its place; other formats leave it out (their
 * models could not read it). Governance counts its JSON as text and never rewrites it: it leaves the view only
 * when the history around it is summarised or compressed.
 */
export interface OpaqueBlock {
  readonly type: "opaque";
  /** Whose block it is (`anthropic`, `openai`, …): only that provider's exporter sends it. */
  readonly provider: string;
  /** The block (or item) as the provider sent it, its own `type` field included. */
  readonly data: { readonly [key: string]: JsonValue };
}

/** Every kind of content block. */
export type ContentBlock =
  TextBlock | ReasoningBlock | ToolCallBlock | ToolResultBlock | ImageBlock | FileBlock | OpaqueBlock;

/** Token usage reported by a provider for one model request. */
export interface Usage {
  /** All prompt tokens of the request, cached ones included (`cacheRead + cacheWrite + uncached`). */
  readonly input: number;
  readonly output: number;
  /** Prompt tokens served from the provider's cache. */
  readonly cacheRead?: number;
  /** Prompt tokens written to the provider's cache. */
  readonly cacheWrite?: number;
  /** Of `cacheWrite`, the tokens written to long-lived entries (Anthropic's 1-hour cache, billed at 2×). */
  readonly cacheWriteLong?: number;
  /** Output tokens spent on hidden reasoning (included in `output`). */
  readonly reasoning?: number;
}

/**
 * Messages created by governance or by an importer rather than by the conversation itself:
 * `summary` replaces a range of older messages; `marker` records an event (e.g. a compaction boundary)
 * and is never sent to a model.
 */
export type MessageKind = "summary" | "marker";

/** What a summary message replaced. */
export interface SummaryRange {
  /** `seq` of the first and last replaced message. */
  readonly fromSeq: number;
  readonly toSeq: number;
  readonly messageCount: number;
}

/** One entry of the history. Treat as immutable: ctxkit freezes the messages it creates. */
export interface Message {
  readonly id: string;
  readonly sessionId: string;
  /** Append order, unique within the session. */
  readonly seq: number;
  /** 1-based number of the user turn this message belongs to (0 before the first user message). */
  readonly turn: number;
  readonly role: Role;
  readonly content: readonly ContentBlock[];
  /** ISO 8601 time of creation. */
  readonly createdAt: string;
  readonly kind?: MessageKind;
  readonly summaryOf?: SummaryRange;
  /** Token count of this message, counted once and cached (see `tokens/`). */
  readonly tokens?: number;
  /** Name of the counter that produced `tokens`, so a different counter knows to recount. */
  readonly tokenizer?: string;
  // Assistant-only fields.
  readonly model?: string;
  readonly provider?: string;
  readonly usage?: Usage;
  readonly finishReason?: string;
  readonly error?: string;
  readonly completedAt?: string;
  /** Free-form data from importers or the caller (never sent to a model). */
  readonly metadata?: { readonly [key: string]: JsonValue };
}

/** The fields a caller supplies when appending; ids, seq, turn and times are filled in. */
export type MessageInput = Omit<Message, "id" | "sessionId" | "seq" | "turn" | "createdAt"> &
  Partial<Pick<Message, "id" | "createdAt">>;
