import {
  fromOpenAIChat,
  toOpenAIChat,
  type OpenAIChatMessage,
} from "../../formats/providers/openai-chat/index.ts";
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
 * Puts the client's own messages back in place of their chat renderings in a governed chat message list (the
 * stateless governor answers in chat format, which has no room for reasoning items or item ids): a governed
 * message identical to the rendering of a client message is that message; anything else (a summary, an
 * offloaded tool output) is converted from chat.
 *
 * @example
 * const restored = restoreMessages(governed.messages, clientMessages);
 */
export function restoreMessages(
  governed: readonly OpenAIChatMessage[],
  originals: readonly Message[],
): Message[] {
  const byRendering = new Map<string, Message[]>();
  for (const message of originals) {
    for (const rendering of toOpenAIChat([message])) {
      const key = JSON.stringify(rendering);
      byRendering.set(key, [...(byRendering.get(key) ?? []), message]);
    }
  }
  const restored: Message[] = [];
  for (const message of governed) {
    const found = byRendering.get(JSON.stringify(message))?.shift();
    if (found === undefined) restored.push(...fromOpenAIChat([message]));
    else if (restored.at(-1) !== found) restored.push(found);
  }
  return restored;
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
 * function and custom tool calls), as one assistant message's content. Built-in tool items the converter does
 * not know are left out.
 *
 * @example
 * replyContent([{ type: "message", role: "assistant", content: [{ type: "output_text", text: "Hi" }] }]);
 */
export function replyContent(output: readonly unknown[]): ContentBlock[] {
  const known = output.filter((item) => {
    const type = asRecord(item)?.["type"];
    return (
      type === "message" || type === "reasoning" || type === "function_call" || type === "custom_tool_call"
    );
  });
  const blocks = known.length === 0 ? [] : fromOpenAIResponses(known).flatMap((message) => message.content);
  return blocks.length === 0 ? [{ type: "text", text: "" }] : blocks;
}
