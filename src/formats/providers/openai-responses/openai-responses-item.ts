import type { JsonValue } from "../../../model/message.ts";

/** Metadata key under which a message keeps the fields of its Responses items that are not interpreted. */
export const ITEM_EXTRAS_KEY = "openai.items";

/** Text input. */
export interface ResponsesInputText {
  type: "input_text";
  text: string;
}

/** An image: `image_url` (https or base64 `data:` URL) or an uploaded `file_id`. */
export interface ResponsesInputImage {
  type: "input_image";
  detail: "auto" | "low" | "high" | "original";
  image_url?: string;
  file_id?: string;
}

/** A file: `file_data` (base64 `data:` URL), `file_url` or an uploaded `file_id`. */
export interface ResponsesInputFile {
  type: "input_file";
  file_data?: string;
  file_url?: string;
  file_id?: string;
  filename?: string;
}

/** Content of user, system and developer messages, and of tool outputs. */
export type ResponsesInputContent = ResponsesInputText | ResponsesInputImage | ResponsesInputFile;

/** A user, system or developer message. */
export interface ResponsesInputMessage {
  type: "message";
  role: "user" | "system" | "developer";
  content: string | ResponsesInputContent[];
  [extra: string]: unknown;
}

/**
 * Metadata key under which an assistant message keeps how many content parts each of its Responses message items
 * had, keyed by the index (among the message's text blocks) of the item's first text block; only items with more
 * than one part are listed. `{ "0": 2 }`: the first two text blocks go back as one item.
 */
export const MESSAGE_PARTS_KEY = "openai.messageParts";

/** Text the assistant wrote; `annotations` holds citations (`url_citation`, `file_citation`, …). */
export interface ResponsesOutputText {
  type: "output_text";
  text: string;
  annotations: JsonValue[];
  [extra: string]: unknown;
}

/** The assistant's refusal to answer. */
export interface ResponsesRefusal {
  type: "refusal";
  refusal: string;
}

/** An assistant message: one item per text block, unless the message recorded items of several parts. */
export interface ResponsesOutputMessage {
  type: "message";
  role: "assistant";
  content: (ResponsesOutputText | ResponsesRefusal)[];
  [extra: string]: unknown;
}

/** Reasoning: readable summary parts, and `encrypted_content` that lets OpenAI restore the hidden reasoning. */
export interface ResponsesReasoning {
  type: "reasoning";
  id?: string;
  summary: { type: "summary_text"; text: string }[];
  encrypted_content?: string;
  [extra: string]: unknown;
}

/** A function call; `arguments` is a JSON string. */
export interface ResponsesFunctionCall {
  type: "function_call";
  call_id: string;
  name: string;
  arguments: string;
  [extra: string]: unknown;
}

/** A custom (free-form text) tool call. */
export interface ResponsesCustomToolCall {
  type: "custom_tool_call";
  call_id: string;
  name: string;
  input: string;
  [extra: string]: unknown;
}

/** A function's output: text, or a list of text, images and files. */
export interface ResponsesFunctionCallOutput {
  type: "function_call_output" | "custom_tool_call_output";
  call_id: string;
  output: string | ResponsesInputContent[];
  [extra: string]: unknown;
}

/**
 * An item of a type ctxkit does not model (a built-in tool's call or output, `item_reference`, …), as it came
 * (kept in an opaque block).
 */
export interface ResponsesOpaqueItem {
  type: string;
  [extra: string]: unknown;
}

/** Any input item this converter reads or writes. */
export type ResponsesInputItem =
  | ResponsesInputMessage
  | ResponsesOutputMessage
  | ResponsesReasoning
  | ResponsesFunctionCall
  | ResponsesCustomToolCall
  | ResponsesFunctionCallOutput
  | ResponsesOpaqueItem;
