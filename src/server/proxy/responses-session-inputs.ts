import { messageText, toolCallsOf } from "../../model/blocks.ts";
import type { Message } from "../../model/message.ts";

/** What recognises a reply without tool calls: its text, or (reasoning only) its whole content. */
function replyKey(message: Message): string {
  const text = messageText(message);
  return text !== "" ? `text:${text}` : `content:${JSON.stringify(message.content)}`;
}

/**
 * The client messages that are new to a stored session. Clients such as Codex resend the whole conversation
 * on every request even when ctxkit keeps it: the client's assistant messages are matched, in order, to the
 * replies the session holds (by their tool call ids, else their text, else their whole content; a client may
 * have dropped some), and everything up to the last matched one is skipped. Once every stored reply is matched,
 * a later equal message is new. Not for input that holds only new items (after `previous_response_id`): a new
 * assistant message equal to a stored one would be taken for a resend.
 *
 * @example
 * const fresh = newMessages(fromClient, await session.history());
 */
export function newMessages(client: readonly Message[], stored: readonly Message[]): Message[] {
  return matchStored(client, stored).fresh;
}

/** What `matchStored` found: the client's new messages, and how far into the stored replies they continue. */
export interface StoredMatch {
  /** The client messages after the last one matched to a stored reply (all of them when none matched). */
  readonly fresh: Message[];
  /** The position, among the stored replies, of the last one matched, plus one (0 when none matched). */
  readonly matched: number;
  /** How many replies the session holds. */
  readonly replies: number;
}

/**
 * `newMessages`, telling also how far the client's messages reach into the stored replies: a client that resends
 * its conversation as the session holds it matches the session's latest reply (`matched === replies`).
 *
 * @example
 * const { fresh, matched, replies } = matchStored(fromClient, await session.history());
 */
export function matchStored(client: readonly Message[], stored: readonly Message[]): StoredMatch {
  // Where each call id and each reply key stands among the stored replies (ascending).
  const positions = new Map<string, number[]>();
  let replies = 0;
  for (const message of stored) {
    if (message.role !== "assistant") continue;
    for (const key of keysOf(message)) {
      const list = positions.get(key) ?? [];
      list.push(replies);
      positions.set(key, list);
    }
    replies++;
  }
  let next = 0;
  let last = -1;
  client.forEach((message, index) => {
    if (message.role !== "assistant" || next >= replies) return;
    let found = Number.POSITIVE_INFINITY;
    for (const key of keysOf(message)) found = Math.min(found, firstAtOrAfter(positions.get(key), next));
    if (found === Number.POSITIVE_INFINITY) return;
    next = found + 1;
    last = index;
  });
  return { fresh: client.slice(last + 1), matched: next, replies };
}

/** How a reply is recognised: the ids of its tool calls, else its text, else (reasoning only) its content. */
function keysOf(message: Message): string[] {
  const calls = toolCallsOf(message);
  return calls.length > 0 ? calls.map((call) => `call:${call.id}`) : [replyKey(message)];
}

/** The first of the ascending `list` at or after `from` (infinity when none). */
function firstAtOrAfter(list: readonly number[] | undefined, from: number): number {
  if (list === undefined) return Number.POSITIVE_INFINITY;
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (list[middle]! < from) low = middle + 1;
    else high = middle;
  }
  return low < list.length ? list[low]! : Number.POSITIVE_INFINITY;
}
