import { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ContextEngine } from "../../engine/context-engine.ts";
import type { PreparedRequest } from "../../engine/prepared-request.ts";
import type { FeedItem, SessionFeed } from "../shared/session-feed.ts";
import { feedOf } from "./langchain-feeds.ts";
import { entryOf, originalMetadata, toLangChain } from "./langchain-messages.ts";

/** Options of `CtxkitChatMessageHistory`. */
export interface CtxkitChatMessageHistoryOptions {
  /** The context engine: its store keeps the history, its policy governs what `getMessages()` returns. */
  engine: ContextEngine;
  /** The session (conversation) id; an existing session is continued. */
  sessionId: string;
  /** The chain's system prompt, counted against the window when governing (it is not stored). */
  system?: string;
  /** Called with every governed history `getMessages()` hands out. */
  onRequest?: (request: PreparedRequest) => void;
}

/**
 * A LangChain chat message history on a ctxkit store, for classic chains (`RunnableWithMessageHistory`):
 * `addMessages` records a turn and commits it in one transaction, `getMessages` returns the governed history
 * (old tool outputs truncated or offloaded, the middle compacted into a summary once it passes the trigger,
 * never more than the window) with the messages governance did not touch as they were added.
 *
 * @example
 * ```ts
 * const chain = new RunnableWithMessageHistory({
 *   runnable: prompt.pipe(model),
 *   getMessageHistory: (sessionId) => new CtxkitChatMessageHistory({ engine, sessionId }),
 *   inputMessagesKey: "question",
 *   historyMessagesKey: "history",
 * });
 * await chain.invoke({ question: "Where is my order?" }, { configurable: { sessionId: "support-42" } });
 * ```
 */
export class CtxkitChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ["ctxkit", "langchain"];
  readonly #options: CtxkitChatMessageHistoryOptions;

  constructor(options: CtxkitChatMessageHistoryOptions) {
    super();
    this.#options = options;
  }

  get #feed(): SessionFeed<BaseMessage> {
    return feedOf(this.#options.engine, this.#options.sessionId);
  }

  /** The governed history, oldest first. */
  override async getMessages(): Promise<BaseMessage[]> {
    const system = this.#options.system ?? "";
    const feed = this.#feed;
    const prepared = await feed.session.prepare({
      system: [{ name: "identity", content: system, heading: null }],
    });
    this.#options.onRequest?.(prepared);
    return prepared.messages.map((message) => feed.original(message) ?? toLangChain(message));
  }

  override async addMessage(message: BaseMessage): Promise<void> {
    await this.addMessages([message]);
  }

  /** Records the messages and commits them in one transaction. */
  override async addMessages(messages: BaseMessage[]): Promise<void> {
    const items: FeedItem<BaseMessage>[] = [];
    const toolName = (callId: string) =>
      messages
        .filter((message) => AIMessage.isInstance(message))
        .flatMap((message) => message.tool_calls ?? [])
        .find((call) => call.id === callId)?.name ?? "tool";
    messages.forEach((message, index) => {
      const entry = entryOf(message, toolName);
      // Its stored form goes with it, so a restarted process hands the same message back (`originalOf`).
      if (entry !== undefined)
        items.push({ entry, source: message, key: `${index}`, metadata: originalMetadata(message, entry) });
    });
    const feed = this.#feed;
    await feed.record(items);
    await feed.commit();
  }

  /** Deletes the session (its rows and offloaded outputs). */
  override async clear(): Promise<void> {
    const { engine, sessionId } = this.#options;
    await engine.settings.store.deleteSession(sessionId);
    engine.release(sessionId);
  }
}
