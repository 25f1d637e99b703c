import type { AgentInputItem, CallModelInputFilter, ModelInputData, Session } from "@openai/agents";
import type { ContextEngine } from "../../engine/context-engine.ts";
import type { EngineSession } from "../../engine/engine-session.ts";
import type { PreparedRequest } from "../../engine/prepared-request.ts";
import { canonicalJson, messageText } from "../../model/blocks.ts";
import { randomIds } from "../../model/ids.ts";
import type { Message } from "../../model/message.ts";
import type { SessionInit, SessionStore } from "../../store/session-store.ts";
import { governedEngine, type EngineGovernorOptions } from "../shared/memory-engine.ts";
import { itemsToMessages, messagesToItems } from "./agent-items.ts";

/**
 * Options of `CtxkitAgentsSession`: where the history is stored, and the governor's options (`recall` defaults to
 * false: the runner runs the agent's own tools, so an offload notice says to run the tool again).
 */
export interface CtxkitAgentsSessionOptions extends EngineGovernorOptions {
  /** Any ctxkit session store (memory, SQLite, PostgreSQL). */
  store: SessionStore;
  /** The session id; an existing session is continued. Default: a fresh id. */
  sessionId?: string;
  /** Owner, agent and metadata of the session when it is created. */
  session?: SessionInit;
  /** Tokens of the agent's instructions and tool definitions, counted in every request. Default 0. */
  fixedTokens?: number;
  /** Called with every governed request handed to the runner. */
  onRequest?: (request: PreparedRequest) => void;
}

/**
 * An OpenAI Agents SDK `Session` backed by a ctxkit session store, with ctxkit governance applied to the
 * history the runner gets: `getItems()` returns the governed history (old tool outputs truncated or offloaded,
 * the middle compacted into a summary once it passes the trigger, never more than the window), while
 * `addItems()` stores every item verbatim, one transaction per call. Items governance did not touch come back
 * exactly as they were added, so the runner's prompt keeps its cached prefix between checkpoints.
 *
 * It is a thin adapter over an engine session (`ContextEngine`): the history, its sequence numbers and the
 * governor's state live there and are committed with every `addItems()`, so a restarted process governs on as if
 * it had never stopped. System items are sent as one system item at the start (the session's system prompt).
 *
 * `getItems()` is called once per run; to govern every model call of a run (the tool outputs a long run piles up),
 * pass the session's `callModelInputFilter` to `run` too. The filter records the run's new items in the session's
 * open turn (as the model sent them: a function call keeps the `id` the runner strips before it stores it), governs
 * them with the stored history, and returns the run's own items as the very objects it was given. `addItems()` at
 * the end of the run then commits the turn; a run that failed leaves nothing (the next `getItems()` drops it).
 *
 * @example
 * ```ts
 * const session = new CtxkitAgentsSession({ store, sessionId: "support-42", contextWindow: 128_000, counter, summarizer });
 * const result = await run(agent, "Where is my order?", { session, callModelInputFilter: session.callModelInputFilter });
 * ```
 */
export class CtxkitAgentsSession implements Session {
  readonly #engine: ContextEngine;
  readonly #id: string;
  readonly #fixedTokens: number;
  readonly #onRequest: ((request: PreparedRequest) => void) | undefined;
  /** What `getItems()` last handed the runner: a model call's input starts with these. */
  #served: AgentInputItem[] = [];
  /** Keys of the items recorded since then, in order (the run's input, then its new items). */
  #recorded: string[] = [];
  /** Keys of the items the filter recorded that the runner has not stored yet (a suffix of `#recorded`). */
  #unstored: string[] = [];
  /** True while the filter's items wait in the session's open turn, not committed. */
  #open = false;

  constructor(options: CtxkitAgentsSessionOptions) {
    const { store, sessionId, session, fixedTokens, onRequest, ...governor } = options;
    // The runner runs the agent's tools, never the session's: notices must not name `recall_tool_output`.
    this.#engine = governedEngine(store, { ...governor, recall: governor.recall ?? false }, session);
    this.#id = sessionId ?? (options.ids ?? randomIds)("ses");
    this.#fixedTokens = fixedTokens ?? 0;
    this.#onRequest = onRequest;
  }

  /** The engine session behind this one (its history, governor and stats). */
  get session(): EngineSession {
    return this.#engine.session(this.#id);
  }

  async getSessionId(): Promise<string> {
    return this.#id;
  }

  /**
   * The governed history, oldest first; with `limit`, its last `limit` items. Untouched items are returned as
   * they were added; summaries come as a user message in the summary envelope.
   */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    await this.#dropOpenTurn();
    const items = await this.#governed();
    this.#served = items;
    this.#recorded = [];
    this.#unstored = [];
    if (limit === undefined) return items;
    return limit <= 0 ? [] : items.slice(-limit);
  }

  /**
   * Stores the items (verbatim) in one transaction, with the governor's state: those the filter recorded in this
   * run are committed as recorded, the others recorded first.
   */
  async addItems(items: AgentInputItem[]): Promise<void> {
    if (items.length === 0) return;
    const keys = items.map(itemKey);
    let known = 0;
    while (known < keys.length && keys[known] === this.#unstored[known]) known++;
    if (known < Math.min(keys.length, this.#unstored.length)) {
      // Not what this run recorded (another run's items): take back what waits, and store the items as given.
      await this.#dropOpenTurn();
      known = 0;
    }
    // Open until the commit succeeds: a failed one is taken back by the next `getItems()`.
    this.#open = true;
    await this.#record(items.slice(known));
    await this.session.commit();
    this.#open = false;
    this.#recorded.push(...keys.slice(known));
    this.#unstored = this.#unstored.slice(known);
  }

  /**
   * A `callModelInputFilter` for `run` that governs every model call of a run, not only its start: the run's new
   * items are recorded in the session's open turn and governed with the stored history; what governance left
   * untouched goes out as the objects the runner gave, summaries and shortened outputs as new items (which the
   * runner does not store: it stores the run's own items). An input that does not continue what `getItems()`
   * served and the run recorded (another session's run) is passed through unchanged.
   */
  readonly callModelInputFilter: CallModelInputFilter = Object.assign(
    async ({ modelData }: { modelData: ModelInputData }): Promise<ModelInputData> => {
      const input = modelData.input;
      const served = this.#served;
      const startsWithServed =
        input.length >= served.length &&
        served.every((item, index) => input[index] === item || itemKey(input[index]!) === itemKey(item));
      if (!startsWithServed) return modelData;
      const fresh = input.slice(served.length);
      const keys = fresh.map(itemKey);
      let known = 0;
      while (known < keys.length && keys[known] === this.#recorded[known]) known++;
      if (known < this.#recorded.length) return modelData;
      const run = fresh.slice(known);
      if (run.length > 0) {
        this.#open = true;
        await this.#record(run);
        this.#recorded.push(...keys.slice(known));
        this.#unstored.push(...keys.slice(known));
      }
      return { ...modelData, input: await this.#governed() };
    },
    { preserveInputIdentity: true },
  );

  /** The governed history as items: system items first, as the session's system prompt. */
  async #governed(): Promise<AgentInputItem[]> {
    const session = this.session;
    const history = await session.history();
    const system = history.filter((message) => message.role === "system" && message.kind === undefined);
    const request = await session.prepare({
      system: system.map((message, index) => ({
        name: `system-${index}`,
        content: messageText(message),
        heading: null,
      })),
      fixedTokens: this.#fixedTokens,
      media: "ref",
    });
    this.#onRequest?.(request);
    const items = messagesToItems(request.messages, new Set(history));
    return request.system === "" ? items : [{ role: "system", content: request.system }, ...items];
  }

  /** Records items in the session's open turn (copies: the stored items must not change with the runner's). */
  async #record(items: readonly AgentInputItem[]): Promise<void> {
    const session = this.session;
    for (const input of itemsToMessages(structuredClone(items))) {
      const metadata = input.metadata === undefined ? {} : { metadata: input.metadata };
      if (input.role === "user") await session.addUser(input.content, { ...metadata, keepOpenTurn: true });
      else if (input.role === "system") await session.addSystem(input.content, metadata);
      else if (input.role === "assistant")
        await session.recordAssistant({ content: input.content, ...metadata });
      else
        await session.recordToolResults(
          input.content.flatMap((block) => (block.type === "tool-result" ? [block] : [])),
          { metadata: [input.metadata] },
        );
    }
  }

  /** Takes back what the filter recorded and the runner never stored (a run that failed). */
  async #dropOpenTurn(): Promise<void> {
    if (!this.#open) return;
    await this.session.interrupt();
    this.#open = false;
    this.#recorded = this.#recorded.slice(0, this.#recorded.length - this.#unstored.length);
    this.#unstored = [];
  }

  /**
   * Removes the most recent item and returns it: the store removes the newest message (`removeLastMessage`), and
   * when that message held other items (assistant items stored together), they are stored again as one message.
   * A newest message that is a summary is refused with `CompactedMessageError`. (Those other items are a second
   * write: should it fail, they are gone with the popped one.)
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    await this.#dropOpenTurn();
    const removed = await this.#engine.settings.store.removeLastMessage(this.#id);
    // The session object holds the removed message: the next use loads the session as stored.
    this.#engine.release(this.#id);
    if (removed === undefined) return undefined;
    const items = messagesToItems([removed], new Set<Message>([removed]));
    if (items.length > 1) {
      await this.#record(items.slice(0, -1));
      await this.session.commit();
    }
    return items.at(-1);
  }

  /** Deletes the session's history (and its offloaded outputs). */
  async clearSession(): Promise<void> {
    await this.#dropOpenTurn();
    await this.#engine.settings.store.deleteSession(this.#id);
    this.#engine.release(this.#id);
  }
}

/**
 * What identifies an item's content (the runner may hand back copies), without a function call's `id`: the runner
 * strips it from the items it stores.
 */
function itemKey(item: AgentInputItem): string {
  return canonicalJson(item.type === "function_call" ? { ...item, id: undefined } : item);
}
