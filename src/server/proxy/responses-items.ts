import {
  fromOpenAIResponses,
  toOpenAIResponses,
  type ResponsesInputItem,
} from "../../formats/providers/openai-responses/index.ts";
import type { ContentBlock, Message } from "../../model/message.ts";

type JsonRecord = Record<string, unknown>;
const asRecord = (value: unknown): JsonRecord | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonRecord) : undefined;

/**
 * A Responses request's `input` as ctxkit messages: a string is one user message; items are converted by
 * `fromOpenAIResponses` (system and developer messages become system messages, reasoning keeps its encrypted
 * content). `instructions`, when given, comes first as a system message.
 *
 * @example
 * responsesMessages("Hi", "Be terse."); // [system "Be terse.", user "Hi"]
 */
export function responsesMessages(
  input: string | readonly unknown[],
  instructions?: string | null,
  sessionId?: string,
): Message[] {
  const items = typeof input === "string" ? [{ role: "user", content: input }] : input;
  const withInstructions =
    typeof instructions === "string" && instructions !== ""
      ? [{ role: "system", content: instructions }, ...items]
      : items;
  return fromOpenAIResponses(withInstructions, sessionId === undefined ? {} : { sessionId });
}

/**
 * Governed messages as the `instructions` and `input` items of an upstream Responses request: the leading
 * system messages (the client's instructions first) are joined into `instructions` only when the client sent
 * instructions; otherwise they stay input items with their role.
 *
 * @example
 * const { instructions, input } = responsesInput(messages, request.instructions);
 */
export function responsesInput(
  messages: readonly Message[],
  instructions: string | null | undefined,
): { instructions?: string; input: ResponsesInputItem[] } {
  if (typeof instructions !== "string" || instructions === "") return { input: toOpenAIResponses(messages) };
  const first = messages[0];
  const rest = first?.role === "system" ? messages.slice(1) : messages;
  return { instructions, input: toOpenAIResponses(rest) };
}

/**
 * The content blocks of a Responses answer's `output` items (messages, reasoning with its encrypted content,
 * function and custom tool calls, and built-in tool items such as `web_search_call` as opaque blocks, kept so the
 * next request sends them back), as one assistant message's content.
 *
 * @example
 * replyContent([{ type: "message", role: "assistant", content: [{ type: "output_text", text: "Hi" }] }]);
 */
export function replyContent(output: readonly unknown[]): ContentBlock[] {
  const items = output.filter((item) => typeof asRecord(item)?.["type"] === "string");
  const blocks = items.length === 0 ? [] : fromOpenAIResponses(items).flatMap((message) => message.content);
  return blocks.length === 0 ? [{ type: "text", text: "" }] : blocks;
}
