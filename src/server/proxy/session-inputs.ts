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

/**
 * The tool call `callId` names, searched from the end of the history (a result answers a recent call, so the
 * search stops there instead of indexing every message of a long session), and whether a result followed it.
 * `parts` are the history in order, in pieces.
 */
function findCall(
  parts: readonly (readonly Message[])[],
  callId: string,
): { name: string; answered: boolean } | undefined {
  let answered = false;
  for (let part = parts.length - 1; part >= 0; part--) {
    const messages = parts[part]!;
    for (let index = messages.length - 1; index >= 0; index--) {
      const message = messages[index]!;
      if (toolResultsOf(message).some((result) => result.callId === callId)) answered = true;
      const call = toolCallsOf(message).find((block) => block.id === callId);
      if (call !== undefined) return { name: call.name, answered };
    }
  }
  return undefined;
}

/**
 * Appends a client's new messages to a session, in order, without committing any of them: they are committed
 * with the reply in one transaction, so a request that fails stores none of them. A tool result must answer a
 * call of the session that has no result yet (its tool name is filled in from the call); anything else is a
 * `ValidationError`, so a client that resends old messages is told instead of duplicating them.
 *
 * @example
 * await appendInputs(lease.session, turn.inputs);
 */
export async function appendInputs(session: EngineSession, inputs: readonly SessionInput[]): Promise<void> {
  // Only a tool result needs the history (copying it is O(n)): taken once, at the first one; what is appended
  // after that is kept beside it.
  let history: readonly Message[] | undefined;
  const appended: Message[] = [];
  const keep = (messages: readonly Message[]) => {
    if (history !== undefined) appended.push(...messages);
  };
  for (const input of inputs) {
    if (input.role === "user") keep([await session.addUser(input.content, { keepOpenTurn: true })]);
    else if (input.role === "assistant") keep([await session.recordAssistant({ content: input.content })]);
    else {
      const { callId } = input.result;
      history ??= await session.history();
      const found = findCall([history, appended], callId);
      if (found === undefined) {
        throw new ValidationError(
          `the tool result for call "${callId}" answers no tool call of this session; send results only for the calls of the last reply`,
        );
      }
      if (found.answered) {
        throw new ValidationError(
          `call "${callId}" already has a result in this session; send only messages that are new since the last request`,
        );
      }
      keep(
        await session.recordToolResults([{ ...input.result, toolName: input.result.toolName || found.name }]),
      );
    }
  }
}
