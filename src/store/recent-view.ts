import type { ContentBlock, Message } from "../model/message.ts";
import { groupTurns, opensTurn } from "../model/turns.ts";
import type { LoadOptions } from "./session-store.ts";

/** The agent turn budget assumed by `recent` loads when none is given (CowAgent's default). */
export const DEFAULT_MAX_TURNS = 20;

/**
 * How many turns a `recent` load keeps: `recentTurns` when given, else max(3, ⌊maxTurns / 6⌋).
 *
 * @example
 * recentTurnCount({ maxTurns: 60 }); // 10
 */
export function recentTurnCount(options: Pick<LoadOptions, "maxTurns" | "recentTurns">): number {
  if (options.recentTurns !== undefined) return Math.max(0, Math.floor(options.recentTurns));
  return Math.max(3, Math.floor((options.maxTurns ?? DEFAULT_MAX_TURNS) / 6));
}

const textOnly = (content: readonly ContentBlock[]): ContentBlock[] =>
  content.filter((block) => block.type === "text");

/**
 * Each user turn reduced to its user text and its final reply (the last assistant message with text, tool
 * calls and reasoning removed), dropping the tool chains in between — so the result has no orphan tool call.
 * Messages before the first user instruction are dropped. `messages` must be in view order.
 *
 * @example
 * turnEnds(await store.loadMessages(id)).map((message) => message.role); // ["user", "assistant", "user", …]
 */
export function turnEnds(messages: readonly Message[]): Message[] {
  const result: Message[] = [];
  for (const turn of groupTurns(messages)) {
    const opening = turn.messages[0];
    if (!opening || !opensTurn(opening)) continue;
    const userText = textOnly(opening.content);
    result.push(
      userText.length > 0 && userText.length !== opening.content.length
        ? { ...opening, content: userText }
        : opening,
    );
    const reply = turn.messages.findLast(
      (message) => message.role === "assistant" && textOnly(message.content).length > 0,
    );
    if (!reply) continue;
    const replyText = textOnly(reply.content);
    result.push(replyText.length === reply.content.length ? reply : { ...reply, content: replyText });
  }
  return result;
}
