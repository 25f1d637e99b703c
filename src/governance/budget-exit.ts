import type { Clock, IdGenerator } from "../model/ids.ts";
import type { Message } from "../model/message.ts";
import { currentTurnStart } from "../model/turns.ts";
import type { WindowBudget } from "./processor.ts";

/**
 * The iteration-budget notice (the Coqui seed's budget exit): when a run still presses against the window after
 * governance, the request ends with a user note telling the agent to wrap up. Only inside a run (the current
 * turn has at least one step) and never after a reply the request resumes; never stored in the history.
 */
export function budgetExitNotice(
  view: readonly Message[],
  payloadTokens: number,
  window: WindowBudget,
  ids: IdGenerator,
  clock: Clock,
): Message | undefined {
  const last = view.at(-1);
  const start = currentTurnStart(view);
  // A view ending with a reply resumes that reply (a paused Anthropic turn): a note after it would end it.
  if (
    !last ||
    last.role === "assistant" ||
    !view.slice(start).some((message) => message.role === "assistant")
  )
    return undefined;
  const percent = Math.round((payloadTokens / window.usable) * 100);
  return Object.freeze({
    id: ids("notice"),
    sessionId: last.sessionId,
    seq: last.seq,
    turn: last.turn,
    role: "user",
    content: [
      {
        type: "text",
        text:
          `[Context budget notice] This conversation now uses ${percent}% of the model's usable context ` +
          `(${payloadTokens} of ${window.usable} tokens). Wrap up: finish the current step, avoid large tool ` +
          "outputs, and give your answer with what remains to be done.",
      },
    ],
    createdAt: clock().toISOString(),
    metadata: { notice: "budget-exit" },
  } satisfies Message);
}
