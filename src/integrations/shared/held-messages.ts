import { canonicalJson, messageText, toolCallsOf } from "../../model/blocks.ts";
import type { ContentBlock, Message } from "../../model/message.ts";
import type { FeedEntry } from "./session-feed.ts";

/** How a reply is recognised: the ids of its tool calls, else its text, else (reasoning only) its content. */
function replyKeys(content: readonly ContentBlock[]): string[] {
  const calls = toolCallsOf({ content });
  if (calls.length > 0) return calls.map((call) => `call:${call.id}`);
  const text = messageText({ content });
  return [text !== "" ? `text:${text}` : `content:${canonicalJson(content)}`];
}

function blocksOf(content: string | readonly ContentBlock[]): readonly ContentBlock[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : content;
}

/** True when the stored `message` is what the framework's `entry` reads as (by what it is, not where it stands). */
export function holds(message: Message | undefined, entry: FeedEntry): boolean {
  if (message === undefined || message.kind !== undefined || message.role !== entry.role) return false;
  if (entry.role === "tool") {
    return message.content.some(
      (block) => block.type === "tool-result" && block.callId === entry.result.callId,
    );
  }
  if (entry.role === "assistant") {
    const stored = new Set(replyKeys(message.content));
    return replyKeys(blocksOf(entry.reply.content)).some((key) => stored.has(key));
  }
  // A user message: the same text and the same kinds of blocks (media may be stored as blob references).
  return (
    messageText(message) === messageText({ content: entry.content }) &&
    message.content.map((block) => block.type).join() === entry.content.map((block) => block.type).join()
  );
}

/** How many of the session's newest replies are searched for the framework's newest assistant message. */
const RECENT_REPLIES = 16;

/**
 * The history index of the stored reply that the framework's assistant message at `target` is: the newest of the
 * session's last `RECENT_REPLIES` replies that shares a key with it (a retried call repeats the newest steps), or
 * undefined. Searched from the end, so a step costs the same however long the history is.
 */
function matchedReply<Source>(
  messages: readonly Source[],
  target: number,
  history: readonly Message[],
  read: (message: Source) => readonly FeedEntry[],
): number | undefined {
  const reply = read(messages[target]!).find((entry) => entry.role === "assistant");
  if (reply === undefined) return undefined;
  const keys = new Set(replyKeys(blocksOf(reply.reply.content)));
  let searched = 0;
  for (let index = history.length - 1; index >= 0 && searched < RECENT_REPLIES; index--) {
    const message = history[index]!;
    if (message.role !== "assistant" || message.kind !== undefined) continue;
    searched++;
    if (replyKeys(message.content).some((key) => keys.has(key))) return index;
  }
  return undefined;
}

/**
 * How many of the framework messages from `start` (those after its newest assistant message) the session already
 * holds: a call that is sent again after a failure (the same messages, while the session has recorded and committed
 * the steps the failed call made) must record nothing twice. The framework's newest assistant message is found
 * among the session's replies (by its tool call ids, else its text: a client's copy keeps no ids of ours), then the
 * messages after it are compared, in order, with those after that reply (a user message by its text, a tool result
 * by its call id). They are held only when what the session holds beyond them is a step in progress (no final
 * answer): after a final answer, the same user message sent again is a new question (a regenerate).
 */
export function heldAfter<Source>(
  messages: readonly Source[],
  start: number,
  history: readonly Message[],
  read: (message: Source) => readonly FeedEntry[],
): number {
  let at = 0;
  if (start > 0) {
    const reply = matchedReply(messages, start - 1, history, read);
    if (reply === undefined) return 0;
    at = reply + 1;
  }
  let held = 0;
  for (const message of messages.slice(start)) {
    const entries = read(message);
    if (!entries.every((entry, offset) => holds(history[at + offset], entry))) break;
    at += entries.length;
    held++;
  }
  if (held === 0) return 0;
  const beyond = history.slice(at);
  const answered = beyond.some(
    (message) => message.role === "assistant" && toolCallsOf(message).length === 0,
  );
  return answered ? 0 : held;
}
