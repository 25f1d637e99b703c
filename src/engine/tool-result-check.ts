import type { ToolResultInput } from "../conversation/conversation.ts";
import type { ConversationSnapshot } from "../conversation/snapshot.ts";
import { NotFoundError, ValidationError } from "../errors/errors.ts";
import { toolCallsOf, toolResultsOf } from "../model/blocks.ts";
import type { Message } from "../model/message.ts";

/**
 * Refuses a batch of tool results unless each answers a tool call of the history that has no result yet: a
 * result for a call the history does not hold is a `NotFoundError`, a second result for one call a
 * `ValidationError` (a model would never see either: the payload keeps one result per call, right after it).
 */
export function checkToolResults(
  history: ConversationSnapshot,
  results: readonly ToolResultInput[],
  sessionId: string,
): void {
  const batch = new Set<string>();
  for (const { callId } of results) {
    const answered = batch.has(callId) || callState(history, callId);
    if (answered === undefined) {
      throw new NotFoundError(
        "tool call",
        callId,
        "record results only for the tool calls of the assistant's reply, after recording that reply",
      );
    }
    if (answered) {
      throw new ValidationError(
        `tool call "${callId}" already has a result in session ${sessionId}; record one result per call ` +
          "(nothing of this batch was recorded)",
        [{ path: "callId", message: `call ${callId} already answered` }],
      );
    }
    batch.add(callId);
  }
}

/**
 * Whether the tool call `callId` of the history already has a result (true/false), or undefined when the history
 * holds no such call. Searched from the end: the calls being answered are the newest.
 */
function callState(
  history: { readonly length: number; at(index: number): Message | undefined },
  callId: string,
): boolean | undefined {
  let answered = false;
  for (let index = history.length - 1; index >= 0; index--) {
    const message = history.at(index)!;
    if (message.role === "tool" && toolResultsOf(message).some((result) => result.callId === callId))
      answered = true;
    if (message.role === "assistant" && toolCallsOf(message).some((call) => call.id === callId))
      return answered;
  }
  return undefined;
}
