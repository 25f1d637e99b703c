import type { Message } from "../model/message.ts";
import type { ProcessorContext } from "./processor.ts";
import { currentTurnStart, opensTurn } from "../model/turns.ts";

/** Where protection starts in a view. Indices refer to the message list they were computed on. */
export interface Boundaries {
  /** Index of the current instruction (the user message that opened the current turn), or -1. */
  readonly instruction: number;
  /** Index of the first message of the current turn (0 when there is no user message). */
  readonly currentTurn: number;
  /** Index of the newest step's assistant message; equals the length when there is none. */
  readonly newestStep: number;
  /** Tool results at or after this index are inside the protection window of recent tool output. */
  readonly protectedToolsFrom: number;
}

/**
 * Computes the protected regions of `messages`: the current instruction, the newest step (latest assistant
 * message and the results answering it), and the newest `protectTokens` of tool output.
 */
export function computeBoundaries(
  messages: readonly Message[],
  tokensOf: (message: Message) => number,
  protectTokens: number,
): Boundaries {
  const turnStart = currentTurnStart(messages);
  const instruction = messages[turnStart] !== undefined && opensTurn(messages[turnStart]) ? turnStart : -1;
  let newestStep = messages.length;
  for (let index = messages.length - 1; index >= 0; index--) {
    if (messages[index]!.role === "assistant") {
      newestStep = index;
      break;
    }
  }
  let protectedToolsFrom = newestStep;
  let seen = 0;
  for (let index = newestStep - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role !== "tool") continue;
    seen += tokensOf(message);
    if (seen > protectTokens) break;
    protectedToolsFrom = index;
  }
  return { instruction, currentTurn: instruction >= 0 ? instruction : 0, newestStep, protectedToolsFrom };
}

/**
 * Index of the newest message out of the protection window: counting back from the message before the newest step
 * (the latest assistant message), the first whose traffic (`trafficOf`: a tool output's tokens, say) takes the
 * total past `protectTokens`; -1 when none does, or none of the newest `lookAt` messages does.
 */
export function newestUnprotected(
  messages: readonly Message[],
  trafficOf: (message: Message) => number,
  protectTokens: number,
  lookAt = Number.POSITIVE_INFINITY,
): number {
  let index = messages.length - 1;
  while (index >= 0 && messages[index]!.role !== "assistant") index--;
  let seen = 0;
  for (index--; index >= 0 && messages.length - index <= lookAt; index--) {
    seen += trafficOf(messages[index]!);
    if (seen > protectTokens) return index;
  }
  return -1;
}

/** True when the message at `index` may be governed at all (not the instruction, not in the newest step). */
export function isGovernable(index: number, boundaries: Boundaries): boolean {
  return index < boundaries.newestStep && index !== boundaries.instruction;
}

/**
 * The governor settings' protection window and batch, capped by shares of the usable window (25% and 10%).
 */
export function offloadThresholds(context: Pick<ProcessorContext, "settings" | "window">): {
  protect: number;
  minPrunable: number;
} {
  return {
    protect: Math.min(context.settings.protectTokens, Math.floor(context.window.usable * 0.25)),
    minPrunable: Math.min(context.settings.batchTokens, Math.floor(context.window.usable * 0.1)),
  };
}
