import type { AgentInputItem, CallModelInputFilter, ModelInputData, Session } from "@openai/agents";
import { createHash } from "node:crypto";
import { canonicalJson } from "../../model/blocks.ts";
import { randomIds } from "../../model/ids.ts";
import { Governor, type GovernedRequest, type GovernorOptions } from "../../governance/governor.ts";
import type { Message } from "../../model/message.ts";
import { sessionOffloadStore } from "../../store/blob-store.ts";
import type { SessionInit, SessionStore } from "../../store/session-store.ts";
import { AGENT_ITEMS_KEY, itemsToMessages, messagesToItems } from "./agent-items.ts";

/**
 * Options of `CtxkitAgentsSession`: where the history is stored, and the governor's options (`recall` defaults to
 * false: the runner runs the agent's own tools, so an offload notice says to run the tool again).
 */
export interface CtxkitAgentsSessionOptions extends Omit<GovernorOptions, "offloadStore"> {
  /** Any ctxkit session store (memory, SQLite, PostgreSQL). */
  store: SessionStore;
  /** The session id; an existing session is continued. Default: a fresh id. */
  sessionId?: string;
  /** Owner, agent and metadata of the session when it is created. */
  session?: SessionInit;
  /** Tokens of the agent's instructions and tool definitions, counted in every request. Default 0. */
  fixedTokens?: number;
  /** Called with every governed history handed to the runner. */
  onRequest?: (request: GovernedRequest) => void;
}

/**
 * An OpenAI Agents SDK `Session` backed by a ctxkit session store, with ctxkit governance applied to the
 * history the runner gets: `getItems()` returns the governed history (old tool outputs truncated or offloaded,
 * the middle compacted into a summary once it passes the trigger, never more than the window), while
 * `addItems()` stores every item verbatim, one transaction per call. Items governance did not touch come back
 * exactly as they were added, so the runner's prompt keeps its cached prefix between checkpoints.
 *
 * `getItems()` is called once per run; to govern every model call of a run (the tool outputs a long run piles up),
 * pass the session's `callModelInputFilter` to `run` too. The filter governs the stored history plus the run's new
 * items with the same governor, and returns the run's own items as the very objects it was given, so the SDK keeps
 * storing them verbatim — never the governed copies.
 *
 * @example
 * ```ts
 * const session = new CtxkitAgentsSession({ store, sessionId: "support-42", contextWindow: 128_000, counter, summarizer });
 * const result = await run(agent, "Where is my order?", { session, callModelInputFilter: session.callModelInputFilter });
 * ```
 */
export class CtxkitAgentsSession implements Session {
  readonly #options: CtxkitAgentsSessionOptions;
  readonly #store: SessionStore;
  readonly #id: string;
  #governor: Governor;
  #history: Message[] | undefined;
  #nextSeq = 0;
  /** What `getItems()` last handed the runner: a model call's input starts with these. */
  #served: AgentInputItem[] = [];
  /** Keys of the items stored since then, in order (the runner stores a run's input, then its new items). */
  #storedSinceServed: string[] = [];
  /** In-run items converted to messages, by id: the same object each call, so governance stays incremental. */
  #runMessages = new Map<string, Message>();
  /**
   * The function calls the model was sent with their item `id`, by call id: the runner strips that id before it
   * stores them, and the next run's history must send them as the model saw them (its cached prefix).
   */
  readonly #sentCalls = new Map<string, AgentInputItem>();

  constructor(options: CtxkitAgentsSessionOptions) {
    this.#options = options;
    this.#store = options.store;
    this.#id = options.sessionId ?? (options.ids ?? randomIds)("ses");
    this.#governor = this.#newGovernor();
  }

  /** The governor behind `getItems()` (its view, policy and offload store). */
  get governor(): Governor {
    return this.#governor;
  }

  #newGovernor(): Governor {
    return new Governor({
      ...this.#options,
      // The runner runs the agent's tools, never the session's: notices must not name `recall_tool_output`.
      recall: this.#options.recall ?? false,
      offloadStore: sessionOffloadStore(this.#store.blobs, this.#id),
    });
  }

  async #load(): Promise<Message[]> {
    if (this.#history !== undefined) return this.#history;
    const record = await this.#store.getSession(this.#id);
    this.#nextSeq = record?.nextSeq ?? 0;
    this.#history = record ? await this.#store.loadMessages(this.#id) : [];
    return this.#history;
  }

  async getSessionId(): Promise<string> {
    return this.#id;
  }

  /**
   * The governed history, oldest first; with `limit`, its last `limit` items. Untouched items are returned as
   * they were added; summaries come as a user message in the summary envelope.
   */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    const history = await this.#load();
    const request = await this.#governor.prepare(history, { fixedTokens: this.#options.fixedTokens ?? 0 });
    this.#options.onRequest?.(request);
    const items = messagesToItems(request.messages, new Set(history));
    this.#served = items;
    this.#storedSinceServed = [];
    this.#runMessages = new Map();
    if (limit === undefined) return items;
    return limit <= 0 ? [] : items.slice(-limit);
  }

  /** Stores the items (verbatim) in one transaction. */
  async addItems(items: AgentInputItem[]): Promise<void> {
    if (items.length === 0) return;
    const history = await this.#load();
    const result = await this.#store.appendTurn(
      this.#id,
      itemsToMessages(items.map((item) => this.#asSent(item))),
      {
        expectedNextSeq: this.#nextSeq,
        ...(this.#options.session !== undefined && { session: this.#options.session }),
      },
    );
    this.#nextSeq = result.session.nextSeq;
    history.push(...result.messages);
    this.#storedSinceServed.push(...items.map(itemKey));
  }

  /** A function call as the model was sent it (with its `id`), when the runner stores it without. */
  #asSent(item: AgentInputItem): AgentInputItem {
    if (item.type !== "function_call" || item.id !== undefined) return item;
    const sent = this.#sentCalls.get(item.callId);
    if (sent === undefined || itemKey({ ...sent, id: undefined }) !== itemKey(item)) return item;
    this.#sentCalls.delete(item.callId);
    return sent;
  }

  /**
   * A `callModelInputFilter` for `run` that governs every model call of a run, not only its start: the stored
   * history and the run's items not stored yet go through the session's governor; what it left untouched goes out
   * as the objects the runner gave, summaries and shortened outputs as new items (which the runner does not store:
   * it stores the run's own items). An input that does not start with what `getItems()` served (another session's
   * run) is passed through unchanged.
   */
  readonly callModelInputFilter: CallModelInputFilter = Object.assign(
    async ({ modelData }: { modelData: ModelInputData }): Promise<ModelInputData> => {
      const input = modelData.input;
      for (const item of input)
        if (item.type === "function_call" && item.id !== undefined) this.#sentCalls.set(item.callId, item);
      const served = this.#served;
      const startsWithServed =
        input.length >= served.length &&
        served.every((item, index) => input[index] === item || itemKey(input[index]!) === itemKey(item));
      if (!startsWithServed) return modelData;
      let fresh = input.slice(served.length);
      // Items the runner stored already are in the history: skip them (they were stored in this order).
      let stored = 0;
      while (stored < fresh.length && this.#storedSinceServed[stored] === itemKey(fresh[stored]!)) stored++;
      fresh = fresh.slice(stored);
      const history = await this.#load();
      const runMessages = this.#runMessagesOf(fresh, history.at(-1));
      const all = [...history, ...runMessages];
      const request = await this.#governor.prepare(all, { fixedTokens: this.#options.fixedTokens ?? 0 });
      this.#options.onRequest?.(request);
      return { ...modelData, input: messagesToItems(request.messages, new Set(all)) };
    },
    { preserveInputIdentity: true },
  );

  /** The run's unstored items as messages after `last`, each the same object as at the previous call. */
  #runMessagesOf(items: readonly AgentInputItem[], last: Message | undefined): Message[] {
    const inputs = itemsToMessages(items);
    let turn = last?.turn ?? 0;
    return inputs.map((input, index) => {
      const id = `run_${index}_${createHash("sha256").update(canonicalJson(input)).digest("hex").slice(0, 16)}`;
      if (input.role === "user") turn++;
      const known = this.#runMessages.get(id);
      if (known !== undefined) return known;
      const message: Message = {
        ...input,
        id,
        sessionId: this.#id,
        seq: this.#nextSeq + index,
        turn,
        createdAt: (this.#options.clock ?? (() => new Date()))().toISOString(),
      };
      this.#runMessages.set(id, message);
      return message;
    });
  }

  /** Removes the most recent item and returns it (the session's stored rows are rewritten without it). */
  async popItem(): Promise<AgentInputItem | undefined> {
    const history = await this.#load();
    const last = history.at(-1);
    if (last === undefined) return undefined;
    const items = (last.metadata?.[AGENT_ITEMS_KEY] ?? []) as unknown as AgentInputItem[];
    const popped = items.at(-1);
    const dump = await this.#store.dumpSession(this.#id);
    const rest = items.slice(0, -1);
    const [rewritten] = rest.length > 0 ? itemsToMessages(rest) : [];
    const rows = dump.rows.flatMap((row) => {
      if (row.message.id !== last.id) return [row];
      return rewritten === undefined ? [] : [{ ...row, message: { ...row.message, ...rewritten } }];
    });
    await this.#store.restoreSession({ ...dump, rows }, { onExisting: "replace" });
    this.#history = undefined;
    this.#governor = this.#newGovernor();
    return popped;
  }

  /** Deletes the session's history (and its offloaded outputs). */
  async clearSession(): Promise<void> {
    await this.#store.deleteSession(this.#id);
    this.#history = [];
    this.#nextSeq = 0;
    this.#governor = this.#newGovernor();
  }
}

/** What identifies an item's content (the runner may hand back copies). */
function itemKey(item: AgentInputItem): string {
  return canonicalJson(item);
}
