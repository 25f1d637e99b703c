import { ValidationError } from "../errors/errors.ts";
import { systemClock, type Clock } from "../model/ids.ts";
import type { Message } from "../model/message.ts";
import {
  combineContext,
  renderPriorConversation,
  type ExecutionContext,
  type SpeakerLabels,
} from "./execution-context.ts";
import { entryContent, type LedgerEntry } from "./ledger-entry.ts";
import { LEDGER_STATE_VERSION, emptyLedgerState, type LedgerState } from "./ledger-state.ts";
import { formatToolSummary, type ToolCallRecord, type ToolSummaryLimits } from "./tool-summary.ts";

/** Options of `new ConversationLedger()`. */
export interface ConversationLedgerOptions {
  /** State to start from (e.g. loaded from a `SyncStateStore`). */
  readonly state?: LedgerState;
  readonly clock?: Clock;
  /** Speaker names in rendered contexts. */
  readonly labels?: SpeakerLabels;
  /** Name shown in an agent's tool-summary prefix (`[Desktop agent used: …]`); default: the agent's name. */
  readonly agentLabels?: Readonly<Record<string, string>>;
  readonly toolSummaryLimits?: ToolSummaryLimits;
  /** Sliding window: entries kept after each append (older ones are dropped from the front). */
  readonly maxEntries?: number;
}

/** An executor's finished run, to record in the ledger. */
export interface RecordResultInput {
  readonly request: string;
  readonly answer: string;
  readonly toolCalls?: readonly ToolCallRecord[];
  /** The executor's own session id (it now holds this exchange in full detail). */
  readonly executorSessionId: string;
  /** `to` of the `ExecutionContext` the run used; default: the ledger's current end. */
  readonly seenUpTo?: number;
}

/**
 * A conversation shared by a conversation agent and one or more executor agents. Each executor has a cursor —
 * the absolute position up to which its own session knows the conversation — so `contextFor` sends it only what
 * is new. Positions count every entry ever appended, so dropping old entries from the window never shifts them.
 *
 * @example
 * ```ts
 * const ledger = new ConversationLedger({ labels: { assistant: "Contop" } });
 * ledger.appendExchange("What's the weather?", "It's sunny and 72°F.");
 * const context = ledger.contextFor("desktop", "Check my desktop for security risks");
 * const result = await runExecutor(context.message);
 * ledger.recordResult("desktop", { request: context.request, answer: result.answer,
 *   toolCalls: result.calls, executorSessionId: result.sessionId, seenUpTo: context.to });
 * ```
 */
export class ConversationLedger {
  readonly #clock: Clock;
  readonly #options: ConversationLedgerOptions;
  #entries: readonly LedgerEntry[];
  #dropped: number;
  #cursors: Record<string, number>;
  #executorSessionIds: Record<string, string>;

  constructor(options: ConversationLedgerOptions = {}) {
    const state = options.state ?? emptyLedgerState();
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#entries = state.entries.map((entry) => Object.freeze({ ...entry }));
    this.#dropped = state.dropped;
    this.#cursors = { ...state.cursors };
    this.#executorSessionIds = { ...state.executorSessionIds };
  }

  /** Absolute position one past the newest entry (entries ever appended). */
  get end(): number {
    return this.#dropped + this.#entries.length;
  }

  /** Entries dropped from the front of the window so far. */
  get dropped(): number {
    return this.#dropped;
  }

  /** The entries in the window, oldest first (the first is at position `dropped`). */
  get entries(): readonly LedgerEntry[] {
    return this.#entries;
  }

  /** How far `agent`'s session knows the conversation (0 when it has never run). */
  cursor(agent: string): number {
    return this.#cursors[agent] ?? 0;
  }

  /** The executor session id recorded for `agent`, if any. */
  executorSessionId(agent: string): string | undefined {
    return this.#executorSessionIds[agent];
  }

  /** Appends one entry (`at` defaults to now) and applies the window; returns its absolute position. */
  append(entry: Omit<LedgerEntry, "at"> & { at?: string }): number {
    const position = this.end;
    const stored: LedgerEntry = Object.freeze({ ...entry, at: entry.at ?? this.#clock().toISOString() });
    this.#entries = [...this.#entries, stored];
    if (this.#options.maxEntries !== undefined) this.trim(this.#options.maxEntries);
    return position;
  }

  /** Records a plain chat exchange answered by the conversation agent. */
  appendExchange(userText: string, assistantText: string): void {
    this.append({ role: "user", text: userText });
    this.append({ role: "assistant", text: assistantText });
  }

  /**
   * Drops entries from the front so at most `maxEntries` remain, never leaving an assistant entry first.
   * Cursors are absolute and need no adjustment. Returns how many entries were dropped.
   */
  trim(maxEntries: number): number {
    let count = Math.max(0, this.#entries.length - Math.max(0, maxEntries));
    while (count > 0 && count < this.#entries.length && this.#entries[count]!.role === "assistant") count++;
    if (count === 0) return 0;
    this.#entries = this.#entries.slice(count);
    this.#dropped += count;
    return count;
  }

  /**
   * What `agent` needs for `request`: the entries after its cursor that its session does not hold yet, rendered
   * as `[Prior conversation for context] … [Current request] …`. The agent's own exchanges are left out while it
   * has an executor session: that session already holds them in full detail.
   */
  contextFor(agent: string, request: string): ExecutionContext {
    const to = this.end;
    const cursor = Math.min(this.cursor(agent), to);
    const from = Math.max(cursor, this.#dropped);
    const ownKnown = this.#executorSessionIds[agent] !== undefined;
    const prior = this.#entries
      .slice(from - this.#dropped)
      .filter((entry) => !(ownKnown && entry.agent === agent));
    const context = renderPriorConversation(prior, this.#options.labels);
    return {
      agent,
      request,
      prior,
      from,
      to,
      missed: from - cursor,
      context,
      message: combineContext(context, request),
    };
  }

  /**
   * Records an executor's run: the request, then the answer prefixed with its tool summary. The cursor moves to
   * the end — or, when other entries were appended while the agent ran, to `seenUpTo`, so those reach it next
   * time. Returns the assistant entry.
   */
  recordResult(agent: string, input: RecordResultInput): LedgerEntry {
    const seen = input.seenUpTo ?? this.end;
    if (!Number.isInteger(seen) || seen < 0 || seen > this.end) {
      throw new ValidationError(
        `seenUpTo ${seen} is outside the ledger [0, ${this.end}]; pass context.to unchanged`,
      );
    }
    const interleaved = seen < this.end;
    const label = this.#options.agentLabels?.[agent] ?? agent;
    const toolSummary = formatToolSummary(label, input.toolCalls ?? [], this.#options.toolSummaryLimits);
    this.append({ role: "user", text: input.request, agent });
    this.append({
      role: "assistant",
      text: input.answer,
      agent,
      ...(toolSummary !== undefined && { toolSummary }),
    });
    this.#cursors = {
      ...this.#cursors,
      [agent]: Math.max(this.cursor(agent), interleaved ? seen : this.end),
    };
    this.#executorSessionIds = { ...this.#executorSessionIds, [agent]: input.executorSessionId };
    return this.#entries.at(-1)!;
  }

  /** Records `agent`'s executor session id (e.g. restored from a reconnecting client). */
  setExecutorSessionId(agent: string, executorSessionId: string): void {
    this.#executorSessionIds = { ...this.#executorSessionIds, [agent]: executorSessionId };
  }

  /** Forgets `agent`'s session (it was lost): its next context starts at the beginning of the window. */
  resetAgent(agent: string): void {
    const { [agent]: _cursor, ...cursors } = this.#cursors;
    const { [agent]: _id, ...ids } = this.#executorSessionIds;
    this.#cursors = cursors;
    this.#executorSessionIds = ids;
  }

  /** Empties the ledger, its cursors and executor session ids ("new session"). */
  reset(): void {
    this.#entries = [];
    this.#dropped = 0;
    this.#cursors = {};
    this.#executorSessionIds = {};
  }

  /** Puts the ledger back to a state it had (`toState()`), e.g. when saving a change failed. */
  restore(state: LedgerState): void {
    this.#entries = state.entries;
    this.#dropped = state.dropped;
    this.#cursors = { ...state.cursors };
    this.#executorSessionIds = { ...state.executorSessionIds };
  }

  /** The persistable state (plain JSON). */
  toState(): LedgerState {
    return {
      version: LEDGER_STATE_VERSION,
      entries: this.#entries,
      dropped: this.#dropped,
      cursors: { ...this.#cursors },
      executorSessionIds: { ...this.#executorSessionIds },
    };
  }

  /**
   * The window as ctxkit messages, the conversation agent's view: one text message per entry, tool-summary
   * prefixes included, `seq` = absolute position.
   */
  toMessages(sessionId: string): Message[] {
    let turn = 0;
    return this.#entries.map((entry, index) => {
      if (entry.role === "user") turn++;
      const seq = this.#dropped + index;
      return Object.freeze({
        id: `${sessionId}_ledger_${seq}`,
        sessionId,
        seq,
        turn,
        role: entry.role,
        content: [{ type: "text" as const, text: entryContent(entry) }],
        createdAt: entry.at,
        ...(entry.agent !== undefined && { metadata: { agent: entry.agent } }),
      });
    });
  }
}
