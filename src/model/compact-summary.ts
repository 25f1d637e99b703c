import { NotFoundError, ValidationError } from "../errors/errors.ts";
import type { Message } from "./message.ts";

/**
 * `message` with `summary` as the `compactSummary` of its tool result `callId` (the LLMSession seed's pre-computed
 * summary, sent instead of the result once it is older). Throws `NotFoundError` when the message holds no result
 * of that call, `ValidationError` for an empty summary. Returns a new message; the input is not changed.
 *
 * @example
 * const updated = withCompactSummary(toolMessage, "call_1", "42 files listed; src/ holds the code");
 */
export function withCompactSummary(message: Message, callId: string, summary: string): Message {
  if (summary.trim() === "") throw new ValidationError("a compact summary needs some text");
  let found = false;
  const content = message.content.map((block) => {
    if (block.type !== "tool-result" || block.callId !== callId) return block;
    found = true;
    return { ...block, compactSummary: summary };
  });
  if (!found)
    throw new NotFoundError("tool result", callId, `message ${message.id} holds no result of that call`);
  return { ...message, content };
}

/** Index of the message holding the result of tool call `callId`, newest first; -1 when there is none. */
export function toolResultIndex(messages: readonly Message[], callId: string): number {
  return messages.findLastIndex(
    (message) =>
      message.role === "tool" &&
      message.content.some((block) => block.type === "tool-result" && block.callId === callId),
  );
}
