import { convertToModelMessages, type ToolSet, type UIMessage } from "ai";
import { fromAiSdk } from "../../formats/providers/ai-sdk/from-ai-sdk.ts";
import { canonicalJson } from "../../model/blocks.ts";
import { randomIds } from "../../model/ids.ts";
import type { JsonValue, Message, MessageInput } from "../../model/message.ts";
import type { SessionInit, SessionStore, StoredRow } from "../../store/session-store.ts";
import { uiMessagesOf } from "./ui-messages.ts";

/** Metadata key of the row that carries a whole UI message (its first row). */
export const UI_MESSAGE_KEY = "aiSdk.uiMessage";
/** Metadata key of the other rows a UI message was converted to. */
export const UI_MESSAGE_ID_KEY = "aiSdk.uiMessageId";

/** Options of `saveChat`. */
export interface SaveChatOptions {
  /** The tools of the chat, for `convertToModelMessages` (their `toModelOutput`). */
  tools?: ToolSet;
  /** Owner, agent and metadata of the session when the chat is created. */
  session?: SessionInit;
}

/**
 * The UI messages of a chat, as `useChat` shows them (`[]` for a chat never saved). Messages saved by `saveChat`
 * come back exactly as they were saved; messages another writer stored (a ctxkit engine, the proxy) are shown
 * as text, reasoning, file and tool parts.
 *
 * @example
 * ```ts
 * // app/chat/[id]/page.tsx
 * const initialMessages = await loadChat(store, id);
 * ```
 */
export async function loadChat<UI_MESSAGE extends UIMessage = UIMessage>(
  store: SessionStore,
  chatId: string,
): Promise<UI_MESSAGE[]> {
  if ((await store.getSession(chatId)) === undefined) return [];
  const rows = await store.loadMessages(chatId, { strategy: "all", media: "inline" });
  const chat: UIMessage[] = [];
  let foreign: Message[] = [];
  const flush = () => {
    chat.push(...uiMessagesOf(foreign));
    foreign = [];
  };
  for (const row of rows) {
    const saved = row.metadata?.[UI_MESSAGE_KEY];
    if (saved !== undefined) {
      flush();
      chat.push(saved as unknown as UIMessage);
    } else if (row.metadata?.[UI_MESSAGE_ID_KEY] === undefined && row.kind === undefined) {
      foreign.push(row);
    }
  }
  flush();
  return chat as UI_MESSAGE[];
}

/** The UI message as JSON (what a client sends and the store keeps): no `undefined` fields. */
function plain(message: UIMessage): JsonValue {
  return JSON.parse(JSON.stringify(message)) as JsonValue;
}

/** The ctxkit messages one UI message is stored as: its first row carries the UI message itself. */
async function rowsFor(message: UIMessage, tools: ToolSet | undefined): Promise<MessageInput[]> {
  const converted = fromAiSdk(await convertToModelMessages([message], { ...(tools && { tools }) }));
  const rows: MessageInput[] = converted.map(
    ({ id: _id, sessionId: _sessionId, seq: _seq, turn: _turn, createdAt: _createdAt, ...rest }, index) => ({
      ...rest,
      metadata: {
        ...rest.metadata,
        ...(index === 0 ? { [UI_MESSAGE_KEY]: plain(message) } : { [UI_MESSAGE_ID_KEY]: message.id }),
      },
    }),
  );
  // A message with nothing for the model (only data or step parts) is kept on a marker row.
  if (rows.length === 0)
    rows.push({
      role: message.role,
      kind: "marker",
      content: [],
      metadata: { [UI_MESSAGE_KEY]: plain(message) },
    });
  return rows;
}

async function savedMessages(store: SessionStore, chatId: string): Promise<UIMessage[]> {
  const rows = await store.loadMessages(chatId, { strategy: "all" });
  return rows.flatMap((row) => {
    const saved = row.metadata?.[UI_MESSAGE_KEY];
    return saved === undefined ? [] : [saved as unknown as UIMessage];
  });
}

/**
 * Saves a chat's UI messages (what `toUIMessageStreamResponse`'s `onFinish` hands over): messages after the
 * saved ones are appended in one transaction; when the chat diverged from what is stored (a regenerated or
 * edited message, a message updated in place), the chat is rewritten to `messages` in one transaction, its
 * session record (owner, title, spend) kept. Each UI message is stored as the ctxkit messages
 * `convertToModelMessages` makes of it — so governance, search and the inspector see real content — with the UI
 * message itself on its first row, so `loadChat` gives it back unchanged.
 *
 * @example
 * ```ts
 * return result.toUIMessageStreamResponse({
 *   originalMessages: messages,
 *   onFinish: ({ messages }) => saveChat(store, id, messages),
 * });
 * ```
 */
export async function saveChat(
  store: SessionStore,
  chatId: string,
  messages: readonly UIMessage[],
  options: SaveChatOptions = {},
): Promise<void> {
  const record = await store.getSession(chatId);
  const saved = record === undefined ? [] : await savedMessages(store, chatId);
  const kept =
    saved.length <= messages.length && saved.every((message, index) => same(message, messages[index]!));
  const rows: MessageInput[] = [];
  for (const message of kept ? messages.slice(saved.length) : messages)
    rows.push(...(await rowsFor(message, options.tools)));
  if (kept) {
    if (rows.length === 0) return;
    await store.appendTurn(chatId, rows, {
      expectedNextSeq: record?.nextSeq ?? 0,
      ...(options.session !== undefined && { session: options.session }),
    });
    return;
  }
  const dump = await store.dumpSession(chatId);
  const start = dump.session.nextSeq;
  const at = new Date().toISOString();
  let turn = 0;
  const fresh: StoredRow[] = rows.map((input, index) => {
    if (input.role === "user" && input.kind === undefined) turn++;
    const message: Message = {
      ...input,
      id: randomIds("msg"),
      sessionId: chatId,
      seq: start + index,
      turn,
      createdAt: input.createdAt ?? at,
    };
    return { message, position: index };
  });
  await store.restoreSession(
    {
      ...dump,
      session: {
        ...dump.session,
        updatedAt: at,
        messageCount: fresh.length,
        turnCount: turn,
        nextSeq: start + fresh.length,
      },
      rows: fresh,
    },
    { onExisting: "replace" },
  );
}

function same(left: UIMessage, right: UIMessage): boolean {
  return canonicalJson(plain(left)) === canonicalJson(plain(right));
}
