import { messageText, toolCallsOf } from "../../model/blocks.ts";
import type { Message } from "../../model/message.ts";

/** What recognises a reply without tool calls: its text, or (reasoning only) its whole content. */
function replyKey(message: Message): string {
  const text = messageText(message);
  return text !== "" ? `text:${text}` : `content:${JSON.stringify(message.content)}`;
}

/**
 * The client messages that are new to a stored session. Clients such as Codex resend the whole conversation
 * on every request even when ctxkit keeps it: everything up to the last assistant message the session already
 * holds (recognised by its tool call ids, else by its text, else by its whole content) is skipped. A client that sends only new messages
 * (after `previous_response_id`) sends no stored assistant message, so all of its messages are kept.
 *
 * @example
 * const fresh = newMessages(fromClient, await session.history());
 */
export function newMessages(client: readonly Message[], stored: readonly Message[]): Message[] {
  const callIds = new Set<string>();
  const keys = new Set<string>();
  for (const message of stored) {
    if (message.role !== "assistant") continue;
    for (const call of toolCallsOf(message)) callIds.add(call.id);
    keys.add(replyKey(message));
  }
  let last = -1;
  client.forEach((message, index) => {
    if (message.role !== "assistant") return;
    const calls = toolCallsOf(message);
    const known = calls.length > 0 ? calls.some((call) => callIds.has(call.id)) : keys.has(replyKey(message));
    if (known) last = index;
  });
  return client.slice(last + 1);
}
