import { NotFoundError, ValidationError } from "../../errors/errors.ts";
import type { JsonValue, Message, MessageInput } from "../../model/message.ts";
import { checkExpectedSeq, checkSessionId, planAppend } from "../append-plan.ts";
import { checkCompactionInput, compactionBounds, planCompaction } from "../compaction-plan.ts";
import { checkDump, checkDumps } from "../dump-check.ts";
import { withReferencedBlobs } from "../dump-blobs.ts";
import { forkRecord, forkRows } from "../fork-plan.ts";
import { matchesFilter, newestFirst, parseListOptions, sessionFilterSchema, toPage } from "../list-query.ts";
import { inlineMedia } from "../media-blobs.ts";
import { recentTurnCount, turnEnds } from "../recent-view.ts";
import { parseSearchOptions, searchHit } from "../search-options.ts";
import { messageMatches, searchTerms, titleMatches } from "../search-text.ts";
import { newSessionRecord, withDelta, withTurn } from "../session-record.ts";
import { planRemoval } from "../removal-plan.ts";
import type {
  AppendResult,
  AppendTurnOptions,
  BlobData,
  CleanupResult,
  CompactionInput,
  CompactSummaryInput,
  ForkOptions,
  ListOptions,
  LoadOptions,
  RestoreOptions,
  RestoreSessionsOptions,
  RestoreSessionsResult,
  SearchHit,
  SearchOptions,
  SessionDump,
  SessionFilter,
  SessionPage,
  SessionRecord,
  SessionStore,
  SessionStoreOptions,
  StoredRow,
  SyncState,
} from "../session-store.ts";
import { checkSyncInput, checkTitle, existingSessionError, missingMessage } from "../session-updates.ts";
import { withCompactSummary } from "../../model/compact-summary.ts";
import { retentionCutoff, storeContext, type StoreContext } from "../store-context.ts";
import { validate } from "../../model/schemas.ts";
import { MemoryBlobStore } from "./memory-blob-store.ts";

interface MemorySession {
  record: SessionRecord;
  /** In seq order. */
  rows: StoredRow[];
  readonly ids: Set<string>;
  readonly sync: Map<string, SyncState>;
  /** The governor state of the latest write, and the session's `nextSeq` then. */
  governor?: { readonly nextSeq: number; readonly state: JsonValue };
}

const byView = (a: StoredRow, b: StoredRow): number =>
  a.position - b.position || b.message.seq - a.message.seq;

/**
 * A session store in process memory: the reference implementation of the conformance suite and the store for
 * tests and short-lived agents. Every method runs synchronously inside, so each one is atomic.
 *
 * @example
 * const store = new MemorySessionStore();
 * await store.appendTurn("s1", [{ role: "user", content: [{ type: "text", text: "hi" }] }]);
 */
export class MemorySessionStore implements SessionStore {
  readonly blobs = new MemoryBlobStore();
  readonly #sessions = new Map<string, MemorySession>();
  readonly #context: StoreContext;

  constructor(options: SessionStoreOptions = {}) {
    this.#context = storeContext(options);
  }

  async appendTurn(
    sessionId: string,
    messages: readonly MessageInput[],
    options: AppendTurnOptions = {},
  ): Promise<AppendResult> {
    checkSessionId(sessionId);
    const existing = this.#sessions.get(sessionId);
    const head = existing
      ? {
          exists: true,
          nextSeq: existing.record.nextSeq,
          turnCount: existing.record.turnCount,
          ...(existing.record.owner !== undefined && { owner: existing.record.owner }),
        }
      : { exists: false, nextSeq: 0, turnCount: 0 };
    const plan = planAppend(sessionId, head, messages, options, this.#context);
    for (const row of plan.rows) {
      if (existing?.ids.has(row.id))
        throw new ValidationError(`message id "${row.id}" is already stored in session ${sessionId}`);
    }
    // Written on a copy, put in place only when every part succeeded: the append is atomic.
    const session: MemorySession = existing
      ? { ...existing, rows: [...existing.rows], ids: new Set(existing.ids) }
      : {
          record: newSessionRecord(sessionId, options.session, plan),
          rows: [],
          ids: new Set(),
          sync: new Map(),
        };
    session.record = withTurn(session.record, plan);
    for (const message of plan.rows) {
      session.rows.push({ message, position: message.seq });
      session.ids.add(message.id);
    }
    const blobs = [...plan.blobs];
    const summaries: Message[] = [];
    for (const compaction of options.compactions ?? []) {
      const compacted = this.#compact(session, checkCompactionInput(compaction));
      summaries.push(compacted.summary);
      blobs.push(...compacted.blobs);
    }
    delete session.governor;
    if (options.governorState !== undefined) {
      session.governor = { nextSeq: session.record.nextSeq, state: structuredClone(options.governorState) };
    }
    this.#sessions.set(sessionId, session);
    for (const blob of blobs) this.blobs.add(sessionId, blob);
    return { session: this.#record(session), messages: plan.rows, summaries };
  }

  async loadGovernorState(sessionId: string): Promise<JsonValue | undefined> {
    const session = this.#sessions.get(sessionId);
    const governor = session?.governor;
    if (governor === undefined || governor.nextSeq !== session!.record.nextSeq) return undefined;
    return structuredClone(governor.state);
  }

  async loadMessages(sessionId: string, options: LoadOptions = {}): Promise<Message[]> {
    const session = this.#require(sessionId);
    const strategy = options.strategy ?? "full";
    const view = session.rows
      .filter((row) => strategy === "all" || row.summarizedBy === undefined)
      .sort(byView);
    let messages = view.map((row) => row.message);
    if (strategy === "recent") {
      const since = session.record.turnCount - recentTurnCount(options);
      messages = turnEnds(messages.filter((message) => message.turn > since));
    }
    return options.media === "inline" ? inlineMedia(messages, this.blobs) : messages;
  }

  async applyCompaction(sessionId: string, input: CompactionInput): Promise<Message> {
    const checked = checkCompactionInput(input);
    const existing = this.#require(sessionId);
    checkExpectedSeq(sessionId, checked.expectedNextSeq, existing.record.nextSeq);
    const session: MemorySession = { ...existing, rows: [...existing.rows], ids: new Set(existing.ids) };
    const { summary, blobs } = this.#compact(session, checked);
    delete session.governor;
    this.#sessions.set(sessionId, session);
    for (const blob of blobs) this.blobs.add(sessionId, blob);
    return summary;
  }

  /** Applies a checked compaction to `session` (a working copy); returns the summary and the blobs to add. */
  #compact(
    session: MemorySession,
    checked: CompactionInput,
  ): { summary: Message; blobs: readonly BlobData[] } {
    const sessionId = session.record.id;
    const place = (seq: number) => {
      const row = session.rows.find((candidate) => candidate.message.seq === seq);
      return row && { seq, position: row.position, turn: row.message.turn };
    };
    const bounds = compactionBounds(sessionId, checked, {
      from: place(checked.fromSeq),
      to: place(checked.toSeq),
    });
    const visible = session.rows.filter((row) => row.summarizedBy === undefined).sort(byView);
    const replaced = visible.filter((row) => row.position >= bounds.from && row.position <= bounds.to);
    const firstPosition = replaced[0]?.position ?? bounds.from;
    const previous = visible.filter((row) => row.position < firstPosition).at(-1);
    const toPlace = (row: StoredRow) => ({
      seq: row.message.seq,
      position: row.position,
      turn: row.message.turn,
    });
    const plan = planCompaction(
      sessionId,
      checked,
      replaced.map(toPlace),
      previous && toPlace(previous),
      session.record.nextSeq,
      this.#context,
    );
    if (session.ids.has(plan.summary.id))
      throw new ValidationError(`message id "${plan.summary.id}" is already stored in session ${sessionId}`);
    const replacedSeqs = new Set(plan.replacedSeqs);
    session.rows = session.rows.map((row) =>
      replacedSeqs.has(row.message.seq) ? { ...row, summarizedBy: plan.summary.seq } : row,
    );
    session.rows.push({ message: plan.summary, position: plan.position });
    session.ids.add(plan.summary.id);
    session.record = {
      ...withDelta(session.record, plan.delta, plan.now),
      messageCount: session.record.messageCount + 1,
      nextSeq: plan.summary.seq + 1,
    };
    return { summary: plan.summary, blobs: plan.blobs };
  }

  async attachCompactSummary(sessionId: string, input: CompactSummaryInput): Promise<Message> {
    const session = this.#require(sessionId);
    const index = session.rows.findIndex((row) => row.message.id === input.messageId);
    if (index < 0) throw missingMessage(sessionId, input.messageId);
    const row = session.rows[index]!;
    const message = withCompactSummary(row.message, input.callId, input.summary);
    session.rows = session.rows.with(index, { ...row, message });
    return message;
  }

  async removeLastMessage(sessionId: string): Promise<Message | undefined> {
    const session = this.#sessions.get(sessionId);
    const last = session?.rows.at(-1);
    if (session === undefined || last === undefined) return undefined;
    session.record = planRemoval(session.record, last, this.#context.clock().toISOString());
    session.rows = session.rows.slice(0, -1);
    session.ids.delete(last.message.id);
    delete session.governor;
    return last.message;
  }

  async getSession(sessionId: string): Promise<SessionRecord | undefined> {
    const session = this.#sessions.get(sessionId);
    return session && this.#record(session);
  }

  async listSessions(options: ListOptions = {}): Promise<SessionPage> {
    const query = parseListOptions(options);
    const after = query.after;
    const rows = this.#filtered(query.filter).filter(
      (record) =>
        !after ||
        record.updatedAt < after.updatedAt ||
        (record.updatedAt === after.updatedAt && record.id < after.id),
    );
    return toPage(rows.slice(0, query.limit + 1), query.limit);
  }

  async searchSessions(query: string, options: SearchOptions = {}): Promise<SearchHit[]> {
    const terms = searchTerms(query);
    const { filter, limit } = parseSearchOptions(options);
    const hits: SearchHit[] = [];
    for (const record of this.#filtered(filter)) {
      if (hits.length >= limit) break;
      const rows = this.#sessions.get(record.id)!.rows;
      const match = rows.find((row) => messageMatches(row.message, terms));
      if (match || titleMatches(record.title, terms)) hits.push(searchHit(record, match?.message, terms));
    }
    return hits;
  }

  async latestSession(filter: SessionFilter = {}): Promise<SessionRecord | undefined> {
    return this.#filtered(validate(sessionFilterSchema, filter, "session filter"))[0];
  }

  async forkSession(sessionId: string, options: ForkOptions): Promise<SessionRecord> {
    const parent = this.#require(sessionId);
    const id = checkSessionId(options.id ?? this.#context.ids("ses"));
    if (this.#sessions.has(id))
      throw new ValidationError(`session ${id} already exists; choose another id for the fork`);
    const rows = forkRows(parent.rows, options.atSeq, id);
    const title = options.title === undefined ? undefined : checkTitle(options.title);
    const now = this.#context.clock().toISOString();
    const record = forkRecord(parent.record, rows, {
      id,
      atSeq: options.atSeq,
      title,
      now,
      prices: this.#context.prices,
    });
    this.#sessions.set(id, {
      record,
      rows,
      ids: new Set(rows.map((row) => row.message.id)),
      sync: new Map(),
    });
    this.blobs.copyLinks(sessionId, id);
    return record;
  }

  async renameSession(sessionId: string, title: string): Promise<SessionRecord> {
    const session = this.#require(sessionId);
    session.record = { ...session.record, title: checkTitle(title) };
    return this.#record(session);
  }

  async deleteSession(sessionId: string): Promise<boolean> {
    return this.#delete(sessionId) !== undefined;
  }

  async cleanup(olderThanDays: number): Promise<CleanupResult> {
    const cutoff = retentionCutoff(olderThanDays, this.#context.clock());
    let deletedSessions = 0;
    let deletedBlobs = 0;
    for (const [id, session] of [...this.#sessions]) {
      if (cutoff === undefined || session.record.updatedAt >= cutoff) continue;
      deletedBlobs += this.#delete(id) ?? 0;
      deletedSessions++;
    }
    deletedBlobs += this.blobs.collectGarbage((id) => this.#sessions.has(id));
    return { deletedSessions, deletedBlobs };
  }

  /** Deletes a session; returns how many blobs went with it, or undefined when there was no such session. */
  #delete(sessionId: string): number | undefined {
    if (!this.#sessions.delete(sessionId)) return undefined;
    for (const session of this.#sessions.values()) {
      if (session.record.parentId === sessionId) {
        const { parentId: _parent, forkSeq: _fork, ...rest } = session.record;
        session.record = rest;
      }
    }
    return this.blobs.unlinkSession(sessionId);
  }

  async getSyncState(sessionId: string, agent: string): Promise<SyncState | undefined> {
    return this.#sessions.get(sessionId)?.sync.get(agent);
  }

  async setSyncState(
    sessionId: string,
    agent: string,
    cursor: JsonValue,
    executorSessionId?: string,
  ): Promise<SyncState> {
    const input = checkSyncInput(agent, cursor, executorSessionId);
    const session = this.#require(sessionId);
    const state: SyncState = { ...input, updatedAt: this.#context.clock().toISOString() };
    session.sync.set(agent, state);
    return state;
  }

  async dumpSession(sessionId: string): Promise<SessionDump> {
    const session = this.#require(sessionId);
    return {
      session: this.#record(session),
      rows: [...session.rows],
      blobs: this.blobs.dataOf(sessionId),
      syncStates: [...session.sync.values()].sort((a, b) => (a.agent < b.agent ? -1 : 1)),
    };
  }

  async restoreSession(dump: SessionDump, options: RestoreOptions = {}): Promise<SessionRecord> {
    const checked = (
      await withReferencedBlobs([checkDump(dump, this.#context.inlineMediaLimit)], (ref) =>
        this.blobs.blob(ref),
      )
    )[0]!;
    const onExisting = options.onExisting ?? "error";
    if (onExisting === "error" && this.#sessions.has(checked.session.id)) {
      throw existingSessionError(checked.session.id);
    }
    return this.#restore(checked, onExisting)!;
  }

  async restoreSessions(
    dumps: readonly SessionDump[],
    options: RestoreSessionsOptions = {},
  ): Promise<RestoreSessionsResult> {
    // Everything that can fail is checked before the first change, so the batch is written whole or not at all.
    const checked = await withReferencedBlobs(checkDumps(dumps, this.#context.inlineMediaLimit), (ref) =>
      this.blobs.blob(ref),
    );
    const onExisting = options.onExisting ?? "error";
    if (onExisting === "error") {
      for (const dump of checked) {
        if (this.#sessions.has(dump.session.id)) throw existingSessionError(dump.session.id);
      }
    }
    const restored: SessionRecord[] = [];
    const skipped: string[] = [];
    for (const dump of checked) {
      const record = this.#restore(dump, onExisting);
      if (record) restored.push(record);
      else skipped.push(dump.session.id);
      options.onProgress?.(restored.length + skipped.length, checked.length);
    }
    return { restored, skipped };
  }

  /** Writes a checked dump (existing sessions already refused for `error`); undefined when skipped. */
  #restore(dump: SessionDump, onExisting: "error" | "replace" | "skip"): SessionRecord | undefined {
    const id = dump.session.id;
    if (this.#sessions.has(id)) {
      if (onExisting === "skip") return undefined;
      this.#delete(id);
    }
    const rows = [...dump.rows].sort((a, b) => a.message.seq - b.message.seq);
    const session: MemorySession = {
      record: { ...dump.session, executorSessionIds: {} },
      rows,
      ids: new Set(rows.map((row) => row.message.id)),
      sync: new Map(dump.syncStates.map((state) => [state.agent, state])),
    };
    this.#sessions.set(id, session);
    for (const blob of dump.blobs) this.blobs.add(id, blob);
    return this.#record(session);
  }

  async close(): Promise<void> {}

  #require(sessionId: string): MemorySession {
    const session = this.#sessions.get(sessionId);
    if (!session) throw new NotFoundError("session", sessionId, "list sessions to see which exist");
    return session;
  }

  #record(session: MemorySession): SessionRecord {
    const executorSessionIds: Record<string, string> = {};
    for (const state of [...session.sync.values()].sort((a, b) => (a.agent < b.agent ? -1 : 1))) {
      if (state.executorSessionId !== undefined) executorSessionIds[state.agent] = state.executorSessionId;
    }
    return { ...session.record, executorSessionIds };
  }

  #filtered(filter: SessionFilter): SessionRecord[] {
    return [...this.#sessions.values()]
      .map((session) => this.#record(session))
      .filter((record) => matchesFilter(record, filter))
      .sort(newestFirst);
  }
}
