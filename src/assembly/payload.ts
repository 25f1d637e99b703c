import type { Message } from "../model/message.ts";
import { opensTurn } from "../model/turns.ts";
import type { AssembledSystemPrompt } from "./system-prompt.ts";

/** A provider-neutral request: the system prompt and the messages, in the order they are sent. */
export interface Payload {
  readonly system: string;
  readonly messages: readonly Message[];
}

/**
 * Puts a request together in the guaranteed order: the fresh system prompt first, then the governed history
 * (summaries where the messages they replace stood, then the preserved recent history), then the current input
 * last. Persisted system messages are not replayed from history — the fresh system prompt replaces them.
 *
 * @example
 * const payload = assemblePayload(system, governed.messages);
 */
export function assemblePayload(system: AssembledSystemPrompt, view: readonly Message[]): Payload {
  return { system: system.text, messages: view.filter((message) => message.role !== "system") };
}

/**
 * Index of the first message of the current input: the trailing messages after the newest assistant reply
 * (the user's instruction at the start of a turn, or the tool results the model must answer inside a run).
 */
export function currentInputStart(messages: readonly Message[]): number {
  let index = messages.length;
  while (index > 0 && messages[index - 1]!.role !== "assistant") {
    index--;
    if (opensTurn(messages[index]!)) break;
  }
  return index;
}
