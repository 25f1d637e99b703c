import type { ImportedConversation } from "../../formats/transcripts/imported-conversation.ts";
import type { JsonValue, Message } from "../../model/message.ts";
import type { PriceTable } from "../../pricing/model-prices.ts";
import type { SessionDump, SessionOrigin } from "../session-store.ts";
import { normalizeTitle, titleFromMessages } from "../session-title.ts";
import { usageDelta } from "../usage-totals.ts";

/** A conversation read from a transcript or from a ctxkit JSONL file without a `session` line. */
export interface ConversationToStore {
  readonly id: string;
  readonly format: string;
  readonly source: string;
  readonly title?: string | undefined;
  readonly sidechain?: boolean | undefined;
  readonly metadata?: { readonly [key: string]: JsonValue } | undefined;
  readonly messages: readonly Message[];
}

/**
 * The dump that stores an imported conversation as a session: its messages as they are (ids, seqs, turns,
 * times), title from the transcript or the first prompt, created at its first message's time and updated now
 * (so retention counts from the import), usage and cost from the messages' reported usage.
 *
 * @example
 * await store.restoreSession(conversationDump(conversation, { now: new Date().toISOString(), prices }));
 */
export function conversationDump(
  conversation: ConversationToStore | ImportedConversation,
  context: { readonly now: string; readonly prices: PriceTable },
): SessionDump {
  const { messages } = conversation;
  const delta = usageDelta(messages, [], context.prices);
  const title =
    (conversation.title === undefined ? undefined : normalizeTitle(conversation.title)) ??
    titleFromMessages(messages);
  const origin: SessionOrigin = {
    format: conversation.format,
    source: conversation.source,
    ...(conversation.sidechain !== undefined && { sidechain: conversation.sidechain }),
  };
  return {
    session: {
      id: conversation.id,
      ...(title !== undefined && { title }),
      createdAt: messages[0]?.createdAt ?? context.now,
      updatedAt: context.now,
      messageCount: messages.length,
      turnCount: messages.reduce((turn, message) => Math.max(turn, message.turn), 0),
      nextSeq: messages.reduce((seq, message) => Math.max(seq, message.seq + 1), 0),
      usage: delta.usage,
      cost: delta.cost,
      metadata: conversation.metadata ?? {},
      executorSessionIds: {},
      origin,
    },
    rows: messages.map((message) => ({ message, position: message.seq })),
    blobs: [],
    syncStates: [],
  };
}
