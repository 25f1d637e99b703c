import type { JsonValue } from "../../../model/message.ts";

/** A text part. */
export interface OpenAIChatTextPart {
  type: "text";
  text: string;
}

/**
 * Image detail levels every supported `openai` package accepts: 6.x has these three; 7.x adds "original", which
 * ctxkit never emits, so `toOpenAIChat()` output type-checks as `ChatCompletionMessageParam[]` with both.
 */
export type OpenAIChatImageDetail = "auto" | "low" | "high";

/** An image part: an `https:` URL or a base64 `data:` URL. */
export interface OpenAIChatImagePart {
  type: "image_url";
  image_url: { url: string; detail?: OpenAIChatImageDetail };
}

/** A file part: inline `file_data` (a base64 `data:` URL) or an uploaded `file_id`. */
export interface OpenAIChatFilePart {
  type: "file";
  file: { file_data?: string; file_id?: string; filename?: string };
}

/** An audio part (base64 wav or mp3). */
export interface OpenAIChatAudioPart {
  type: "input_audio";
  input_audio: { data: string; format: "wav" | "mp3" };
}

/** Any part of a user message. */
export type OpenAIChatUserPart =
  OpenAIChatTextPart | OpenAIChatImagePart | OpenAIChatFilePart | OpenAIChatAudioPart;

/** A system message. */
export interface OpenAIChatSystemMessage {
  role: "system";
  content: string | OpenAIChatTextPart[];
}

/** A developer message (the system message of newer OpenAI reasoning models). */
export interface OpenAIChatDeveloperMessage {
  role: "developer";
  content: string | OpenAIChatTextPart[];
}

/** A user message. */
export interface OpenAIChatUserMessage {
  role: "user";
  content: string | OpenAIChatUserPart[];
}

/** A call of a function tool; `arguments` is a JSON string. */
export interface OpenAIChatFunctionToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** A call of a custom (free-form text) tool. */
export interface OpenAIChatCustomToolCall {
  id: string;
  type: "custom";
  custom: { name: string; input: string };
}

/**
 * One entry of `reasoning_details` (the OpenRouter convention, which keeps reasoning signatures and redacted
 * reasoning that `reasoning_content` cannot).
 */
export interface OpenAIChatReasoningDetail {
  type: "reasoning.text" | "reasoning.summary" | "reasoning.encrypted";
  text?: string;
  summary?: string;
  data?: string;
  signature?: string;
  [key: string]: JsonValue | undefined;
}

/** The assistant's refusal to answer, as a content part. */
export interface OpenAIChatRefusalPart {
  type: "refusal";
  refusal: string;
}

/**
 * An assistant message; reasoning travels in the widespread `reasoning_content` field. A refusal is the
 * `refusal` field or a refusal part; `annotations` (web search citations) are sent back when imported.
 */
export interface OpenAIChatAssistantMessage {
  role: "assistant";
  content: string | (OpenAIChatTextPart | OpenAIChatRefusalPart)[] | null;
  refusal?: string;
  annotations?: JsonValue[];
  tool_calls?: (OpenAIChatFunctionToolCall | OpenAIChatCustomToolCall)[];
  reasoning_content?: string;
  reasoning_details?: OpenAIChatReasoningDetail[];
}

/** A tool result. OpenAI chat has no error flag: see `TOOL_ERROR_PREFIX`. */
export interface OpenAIChatToolMessage {
  role: "tool";
  tool_call_id: string;
  /** The result's text; a list of text parts when it was imported as one. */
  content: string | OpenAIChatTextPart[];
  /** The tool's name; only sent with `toolMessageNames` (some OpenAI-compatible servers want it). */
  name?: string;
}

/** Any OpenAI Chat Completions message. */
export type OpenAIChatMessage =
  | OpenAIChatSystemMessage
  | OpenAIChatDeveloperMessage
  | OpenAIChatUserMessage
  | OpenAIChatAssistantMessage
  | OpenAIChatToolMessage;
