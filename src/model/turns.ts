import type { Message } from "./message.ts";

/** One user turn: the user message that opened it and everything until the next one. */
export interface Turn {
  /** The opening user message's `turn` (0 for messages before the first user message, e.g. a leading summary). */
  readonly number: number;
  /** Index in the message list of the turn's first message. */
  readonly start: number;
  /** Index one past the turn's last message. */
  readonly end: number;
  readonly messages: readonly Message[];
}

/**
 * True when `message` opens a new turn: a user message that is not a governance summary or marker.
 * A summary of earlier steps of a run stands inside that run's turn, so it must not open one.
 */
export function opensTurn(message: Pick<Message, "role" | "kind">): boolean {
  return message.role === "user" && message.kind === undefined;
}

/**
 * Groups messages into turns. Messages before the first user message form turn 0 (only when there are any).
 * Concatenating the turns' messages gives back the input, in order.
 *
 * @example
 * groupTurns(messages).map((turn) => turn.messages.length)
 */
export function groupTurns(messages: readonly Message[]): Turn[] {
  const turns: Turn[] = [];
  let start = 0;
  const close = (end: number): void => {
    if (end <= start) return;
    const first = messages[start]!;
    turns.push({
      number: opensTurn(first) ? first.turn : 0,
      start,
      end,
      messages: messages.slice(start, end),
    });
  };
  for (let index = 0; index < messages.length; index++) {
    if (!opensTurn(messages[index]!)) continue;
    close(index);
    start = index;
  }
  close(messages.length);
  return turns;
}

/** Display id of a message as in the seeds: `u3` for turn 3's user message, `a3` for its assistant replies. */
export function displayId(message: Pick<Message, "role" | "turn">): string {
  const prefix = { user: "u", assistant: "a", tool: "t", system: "s" }[message.role];
  return `${prefix}${message.turn}`;
}

/** Index of the first message of the last turn (the current turn), or 0 when there is no user message. */
export function currentTurnStart(messages: readonly Message[]): number {
  for (let index = messages.length - 1; index >= 0; index--) if (opensTurn(messages[index]!)) return index;
  return 0;
}
