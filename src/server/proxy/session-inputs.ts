import type { PromptSection } from "../../assembly/system-prompt.ts";
import type { EngineSession } from "../../engine/engine-session.ts";
import { ValidationError } from "../../errors/errors.ts";
import { messageText, toolCallsOf, toolResultsOf } from "../../model/blocks.ts";
import type { ContentBlock, Message, ToolResultBlock } from "../../model/message.ts";

/** One new message a client sends to a stateful session. */
export type SessionInput =
  | { readonly role: "user"; readonly content: readonly ContentBlock[] }
  | { readonly role: "assistant"; readonly content: readonly ContentBlock[] }
  | { readonly role: "tool"; readonly result: Omit<ToolResultBlock, "type"> };

/** A client's new messages split into the system prompt of the request and the messages to store. */
export interface ClientTurn {
  /** The text of the system and developer messages, joined; undefined when there were none. */
  readonly system: string | undefined;
  readonly inputs: readonly SessionInput[];
}

/**
 * Splits converted client messages: system/developer messages form the system prompt (never stored), the rest
 * become session inputs in order. The inputs must end with a user message or tool results.
 *
 * @example
 * const turn = clientTurn(fromOpenAIChat(body.messages));
 */
export function clientTurn(messages: readonly Message[]): ClientTurn {
  const system = messages
    .filter((message) => message.role === "system")
    .map((message) => messageText(message));
  const inputs: SessionInput[] = [];
  for (const message of messages) {
    if (message.role === "user") inputs.push({ role: "user", content: message.content });
    else if (message.role === "assistant") inputs.push({ role: "assistant", content: message.content });
    else if (message.role === "tool") {
      for (const { type: _type, ...result } of toolResultsOf(message)) inputs.push({ role: "tool", result });
    }
  }
  const last = inputs.at(-1);
  if (last === undefined) {
    throw new ValidationError(
      "no new message: send the user's message or the tool results (the session already holds the earlier ones)",
    );
  }
  if (last.role === "assistant") {
    throw new ValidationError(
      "the new messages end with an assistant message; end them with a user message or tool results",
    );
  }
  return { system: system.length === 0 ? undefined : system.join("\n\n"), inputs };
}

/**
 * A client's system prompt as the engine's identity section, verbatim (no heading added), so the upstream
 * receives exactly the text the client wrote.
 *
 * @example
 * await session.prepare({ system: clientSystemPrompt("You are terse.") });
 */
export function clientSystemPrompt(text: string | undefined): { system?: PromptSection[] } {
  return text === undefined ? {} : { system: [{ name: "identity", content: text, heading: null }] };
}

/** Tool calls of the history and which of them already have results, by call id. */
function callIndex(history: readonly Message[]): { names: Map<string, string>; answered: Set<string> } {
  const names = new Map<string, string>();
  const answered = new Set<string>();
  for (const message of history) {
    for (const call of toolCallsOf(message)) names.set(call.id, call.name);
    for (const result of toolResultsOf(message)) answered.add(result.callId);
  }
  return { names, answered };
}

/**
 * Appends a client's new messages to a session, in order. A tool result must answer a call of the session that
 * has no result yet (its tool name is filled in from the call); anything else is a `ValidationError`, so a
 * client that resends old messages is told instead of duplicating them.
 *
 * @example
 * await appendInputs(lease.session, turn.inputs);
 */
export async function appendInputs(session: EngineSession, inputs: readonly SessionInput[]): Promise<void> {
  const { names, answered } = callIndex(await session.history());
  for (const input of inputs) {
    if (input.role === "user") await session.addUser(input.content);
    else if (input.role === "assistant") {
      await session.recordAssistant({ content: input.content });
      for (const call of toolCallsOf({ content: input.content })) names.set(call.id, call.name);
    } else {
      const { callId } = input.result;
      const name = names.get(callId);
      if (name === undefined) {
        throw new ValidationError(
          `the tool result for call "${callId}" answers no tool call of this session; send results only for the calls of the last reply`,
        );
      }
      if (answered.has(callId)) {
        throw new ValidationError(
          `call "${callId}" already has a result in this session; send only messages that are new since the last request`,
        );
      }
      answered.add(callId);
      await session.recordToolResults([{ ...input.result, toolName: input.result.toolName || name }]);
    }
  }
}
