import type { AssistantInput, ToolResultInput } from "../../conversation/conversation.ts";
import type { ContextEngine } from "../../engine/context-engine.ts";
import type { EngineSession } from "../../engine/engine-session.ts";
import type { ContentBlock, Message } from "../../model/message.ts";
import { heldAfter } from "./held-messages.ts";

/** A framework's message read as what an engine session records. */
export type FeedEntry =
  | { readonly role: "user"; readonly content: readonly ContentBlock[] }
  | { readonly role: "assistant"; readonly reply: AssistantInput }
  | { readonly role: "tool"; readonly result: ToolResultInput };

/** One framework message to record: what it reads as, the message itself, and a key that recognises it again. */
export interface FeedItem<Source> {
  readonly entry: FeedEntry;
  readonly source: Source;
  readonly key: string;
  /** Stored with the message (never sent to a model): what gives `source` back after a restart. */
  readonly metadata?: Message["metadata"];
}

/**
 * Keeps an engine session in step with a framework that holds the conversation itself (LangGraph's state,
 * Mastra's message list, a chat history's caller): it records the framework's messages the session has not seen,
 * commits each reply, and remembers which framework message each recorded one came from, so that messages
 * governance left alone go back to the model as the framework's own objects. The adapters use only the session's
 * public `addUser` / `record*` / `commit`: governance, persistence and compaction stay in the session core.
 */
export class SessionFeed<Source> {
  readonly session: EngineSession;
  readonly #origins = new WeakMap<Message, Source>();
  /** The framework message a stored message was recorded from, read back from what it stored (`FeedItem.metadata`). */
  readonly #restore: ((message: Message) => Source | undefined) | undefined;
  /** Keys recorded since the last reply: a model call that is retried sees the same input again. */
  readonly #pending = new Set<string>();

  constructor(session: EngineSession, restore?: (message: Message) => Source | undefined) {
    this.session = session;
    this.#restore = restore;
  }

  /**
   * The framework messages (oldest first) the session has not recorded: all of them when the session has no
   * history yet; otherwise those after the newest assistant message (the user's new input, or the tool results
   * of this step), the framework's copy of older history being what the session already holds. Given `read`
   * (what each message reads as), the messages after that assistant message that the session already holds are
   * recognised too, by what they are (see `heldAfter`): a call the application sends again after it failed
   * part-way (a retry, `useChat`'s regenerate) records nothing twice.
   */
  async unseen(
    messages: readonly Source[],
    isAssistant: (message: Source) => boolean,
    key: (message: Source) => string,
    read?: (message: Source) => readonly FeedEntry[],
  ): Promise<Source[]> {
    let start = 0;
    if ((await this.session.historyLength()) > 0) {
      start = messages.findLastIndex(isAssistant) + 1;
      if (read !== undefined) start += heldAfter(messages, start, await this.session.history(), read);
    }
    return messages.slice(start).filter((message) => !this.#pending.has(key(message)));
  }

  /**
   * Records framework messages in order (consecutive tool results together), without committing. Resolves with the
   * recorded messages, one per item.
   */
  async record(items: readonly FeedItem<Source>[]): Promise<Message[]> {
    const recorded: Message[] = [];
    for (let index = 0; index < items.length; index++) {
      const item = items[index]!;
      const { entry } = item;
      if (entry.role === "tool") {
        const batch = [item];
        while (items[index + 1]?.entry.role === "tool") batch.push(items[++index]!);
        const messages = await this.session.recordToolResults(
          batch.map(({ entry }) => (entry as Extract<FeedEntry, { role: "tool" }>).result),
          { metadata: batch.map((item) => item.metadata) },
        );
        messages.forEach((message, position) => this.#remember(message, batch[position]!));
        recorded.push(...messages);
        continue;
      }
      const message =
        entry.role === "user"
          ? await this.session.addUser(entry.content, {
              ...(item.metadata !== undefined && { metadata: item.metadata }),
            })
          : await this.session.recordAssistant({
              ...entry.reply,
              ...(item.metadata !== undefined && { metadata: { ...entry.reply.metadata, ...item.metadata } }),
            });
      this.#remember(message, item);
      recorded.push(message);
    }
    return recorded;
  }

  /** Records the model's reply to the prepared request and commits everything recorded since the last commit. */
  async reply(reply: AssistantInput, source: Source): Promise<Message> {
    const message = await this.session.recordAssistant(reply);
    this.#origins.set(message, source);
    await this.commit();
    return message;
  }

  /** Commits what was recorded since the last commit (one transaction). */
  async commit(): Promise<void> {
    await this.session.commit();
    this.#pending.clear();
  }

  /**
   * Gives up the open turn after a failure (a commit refused as a concurrent write, a database error): removes what
   * was recorded since the last commit and reloads the session from the store (`session.interrupt()`), so the
   * call can be sent again as it was.
   */
  async abandon(): Promise<void> {
    this.#pending.clear();
    await this.session.interrupt();
  }

  /**
   * The framework message a session message was recorded from: the very object when this process recorded it,
   * else (a restarted process, a message governance rewrote) the one its stored metadata gives back, if any.
   */
  original(message: Message): Source | undefined {
    let source = this.#origins.get(message);
    if (source === undefined && this.#restore !== undefined) {
      source = this.#restore(message);
      if (source !== undefined) this.#origins.set(message, source);
    }
    return source;
  }

  #remember(message: Message, item: FeedItem<Source>): void {
    this.#origins.set(message, item.source);
    this.#pending.add(item.key);
  }
}

/**
 * Feeds shared by every adapter instance of one integration, one per engine and session id (a chain creates a
 * chat history per call; the feed, and what it remembers of the originals, outlives it).
 */
export function sharedFeeds<Source>(
  restore?: (message: Message) => Source | undefined,
): (engine: ContextEngine, id: string) => SessionFeed<Source> {
  const registries = new WeakMap<ContextEngine, Map<string, SessionFeed<Source>>>();
  return (engine, id) => {
    let feeds = registries.get(engine);
    if (feeds === undefined) registries.set(engine, (feeds = new Map()));
    const session = engine.session(id);
    let feed = feeds.get(id);
    // A released engine session is a new object: start a new feed for it.
    if (feed === undefined || feed.session !== session) {
      feed = new SessionFeed(session, restore);
      feeds.set(id, feed);
    }
    return feed;
  };
}
