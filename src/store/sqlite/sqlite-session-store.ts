import { NotFoundError, ValidationError } from "../../errors/index.ts";
import type { JsonValue, Message, MessageInput } from "../../model/message.ts";
import { withCompactSummary } from "../../model/compact-summary.ts";
import type { IdGenerator } from "../../model/ids.ts";
import { validate } from "../../model/schemas.ts";
import { checkExpectedSeq, checkSessionId, planAppend } from "../append-plan.ts";
import { checkCompactionInput, compactionBounds, planCompaction, type RowPlace } from "../compaction-plan.ts";
import { checkDump, checkDumps } from "../dump-check.ts";
import { forkRecord, forkRows } from "../fork-plan.ts";
import { parseListOptions, sessionFilterSchema, toPage } from "../list-query.ts";
import { inlineMedia } from "../media-blobs.ts";
import { recentTurnCount, turnEnds } from "../recent-view.ts";
import { parseSearchOptions } from "../search-options.ts";
import { normalizeSearchText, searchTerms } from "../search-text.ts";
import { newSessionRecord, withDelta, withTurn } from "../session-record.ts";
import type {
  AppendResult,
  AppendTurnOptions,
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
  StoredRow,
  SyncState,
} from "../session-store.ts";
import { checkSyncInput, checkTitle, existingSessionError, missingMessage } from "../session-updates.ts";
import { retentionCutoff, type StoreContext } from "../store-context.ts";
import { SqliteBlobStore } from "./sqlite-blob-store.ts";
import { isUniqueViolation, type SqliteDatabase } from "./sqlite-database.ts";
import {
  collectBlobs,
  insertBlob,
  insertRow,
  insertSession,
  MESSAGE_SELECT,
  messageFromRow,
  readSession,
  storedRowFromRow,
  updateSessionTotals,
  type MessageRow,
} from "./sqlite-rows.ts";
import type { SqliteWriterClient } from "./sqlite-writer-client.ts";
import { latestSessionRow, listSessionRows, searchSessionRows } from "./sqlite-session-queries.ts";
import { readDumpExtras, readSyncState, writeSyncState } from "./sqlite-session-extras.ts";

const VIEW_ORDER = "ORDER BY m.position, m.seq DESC";

/**
 * The embedded, zero-configuration session store: one SQLite file through `node:sqlite` (no native addon),
 * in WAL mode so readers never block the writer. Create it with `openSqliteSessionStore`.
 */
export class SqliteSessionStore implements SessionStore {
  readonly blobs: SqliteBlobStore;
  readonly #database: SqliteDatabase;
  readonly #context: StoreContext;
  /** The writer thread the per-turn writes go to; undefined when they run on this thread (`writer: "inline"`). */
  readonly #writer: SqliteWriterClient | undefined;

  /** @internal Use `openSqliteSessionStore`. */
  constructor(database: SqliteDatabase, context: StoreContext, writer?: SqliteWriterClient) {
    this.#database = database;
    this.#context = context;
    this.#writer = writer;
    this.blobs = new SqliteBlobStore(database);
  }

  /** How this store writes turns: `worker` (a writer thread, group commit) or `inline` (this thread). */
  get writerMode(): "worker" | "inline" {
    return this.#writer ? "worker" : "inline";
  }

  /** Absolute path of the database file (or `:memory:`). */
  get location(): string {
    return this.#database.location;
  }

  /** @internal Writes answered by the writer thread and the transactions they took (undefined when inline). */
  get writerStats(): { readonly writes: number; readonly groups: number } | undefined {
    return this.#writer?.stats;
  }

  /** @internal The connection, for tests and tools that inspect the file. */
  get database(): SqliteDatabase {
    return this.#database;
  }

  async appendTurn(
    sessionId: string,
    messages: readonly MessageInput[],
    options: AppendTurnOptions = {},
  ): Promise<AppendResult> {
    checkSessionId(sessionId);
    if (this.#writer) {
      const ids = this.#context.ids;
      const args = [sessionId, withMessageIds(messages, ids), withCompactionIds(options, ids)];
      return this.#writer.call("appendTurn", args, this.#context.clock());
    }
    const database = this.#database;
    return database.write(() => {
      const existing = readSession(database, sessionId);
      const head = existing ?? { nextSeq: 0, turnCount: 0 };
      const plan = planAppend(
        sessionId,
        { exists: existing !== undefined, ...head },
        messages,
        options,
        this.#context,
      );
      const base = existing ?? newSessionRecord(sessionId, options.session, plan);
      if (!existing) insertSession(database, base);
      for (const message of plan.rows) this.#insert({ message, position: message.seq });
      for (const blob of plan.blobs) insertBlob(database, sessionId, blob);
      let session = withTurn(base, plan);
      const summaries: Message[] = [];
      for (const compaction of options.compactions ?? []) {
        const compacted = this.#compact(session, checkCompactionInput(compaction));
        session = compacted.session;
        summaries.push(compacted.summary);
      }
      updateSessionTotals(database, session);
      this.#saveGovernorState(session, options.governorState);
      return { session, messages: plan.rows, summaries };
    });
  }

  async loadGovernorState(sessionId: string): Promise<JsonValue | undefined> {
    const row = this.#database.read(() =>
      this.#database.get<{ state: string }>(
        "SELECT g.state FROM governor_states g JOIN sessions s ON s.id = g.session_id AND s.next_seq = g.next_seq WHERE g.session_id = ?",
        sessionId,
      ),
    );
    return row === undefined ? undefined : (JSON.parse(row.state) as JsonValue);
  }

  /** Stores (or, with none, drops) the governor state of the session as just written, inside the transaction. */
  #saveGovernorState(session: SessionRecord, state: JsonValue | undefined): void {
    if (state === undefined) {
      this.#database.run("DELETE FROM governor_states WHERE session_id = ?", session.id);
      return;
    }
    this.#database.run(
      "INSERT INTO governor_states (session_id, next_seq, state) VALUES (?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET next_seq = excluded.next_seq, state = excluded.state",
      session.id,
      session.nextSeq,
      JSON.stringify(state),
    );
  }

  async loadMessages(sessionId: string, options: LoadOptions = {}): Promise<Message[]> {
    const database = this.#database;
    const strategy = options.strategy ?? "full";
    const messages = database.read(() => {
      const session = readSession(database, sessionId);
      if (!session) throw missing(sessionId);
      const where = ["m.session_id = ?"];
      const parameters: (string | number)[] = [sessionId];
      if (strategy !== "all") where.push("m.summarized_by IS NULL");
      if (strategy === "recent") {
        where.push("m.turn > ?");
        parameters.push(session.turnCount - recentTurnCount(options));
      }
      const sql = `${MESSAGE_SELECT} WHERE ${where.join(" AND ")} ${VIEW_ORDER}`;
      return database
        .all<MessageRow>(sql, ...parameters)
        .map((row) => messageFromRow(row, database.location));
    });
    const shaped = strategy === "recent" ? turnEnds(messages) : messages;
    return options.media === "inline" ? inlineMedia(shaped, this.blobs) : shaped;
  }

  async applyCompaction(sessionId: string, input: CompactionInput): Promise<Message> {
    const checked = checkCompactionInput(input);
    if (this.#writer) {
      const args = [sessionId, withSummaryId(checked, this.#context.ids)];
      return this.#writer.call("applyCompaction", args, this.#context.clock());
    }
    const database = this.#database;
    return database.write(() => {
      const session = readSession(database, sessionId);
      if (!session) throw missing(sessionId);
      checkExpectedSeq(sessionId, checked.expectedNextSeq, session.nextSeq);
      const compacted = this.#compact(session, checked);
      updateSessionTotals(database, compacted.session);
      this.#saveGovernorState(compacted.session, undefined);
      return compacted.summary;
    });
  }

  /** Applies a checked compaction inside the caller's transaction; returns the summary and the updated record. */
  #compact(session: SessionRecord, checked: CompactionInput): { summary: Message; session: SessionRecord } {
    const database = this.#database;
    const sessionId = session.id;
    const placeSql = "SELECT seq, position, turn FROM messages WHERE session_id = ? AND seq = ?";
    const bounds = compactionBounds(sessionId, checked, {
      from: database.get<RowPlace>(placeSql, sessionId, checked.fromSeq),
      to: database.get<RowPlace>(placeSql, sessionId, checked.toSeq),
    });
    const visible = "FROM messages WHERE session_id = ? AND summarized_by IS NULL";
    const replaced = database.all<RowPlace>(
      `SELECT seq, position, turn ${visible} AND position BETWEEN ? AND ? ORDER BY position`,
      sessionId,
      bounds.from,
      bounds.to,
    );
    const previous = database.get<RowPlace>(
      `SELECT seq, position, turn ${visible} AND position < ? ORDER BY position DESC LIMIT 1`,
      sessionId,
      replaced[0]?.position ?? bounds.from,
    );
    const plan = planCompaction(sessionId, checked, replaced, previous, session.nextSeq, this.#context);
    database.run(
      `UPDATE messages SET summarized_by = ? WHERE session_id = ? AND summarized_by IS NULL AND position BETWEEN ? AND ?`,
      plan.summary.seq,
      sessionId,
      bounds.from,
      bounds.to,
    );
    this.#insert({ message: plan.summary, position: plan.position });
    for (const blob of plan.blobs) insertBlob(database, sessionId, blob);
    return {
      summary: plan.summary,
      session: {
        ...withDelta(session, plan.delta, plan.now),
        messageCount: session.messageCount + 1,
        nextSeq: plan.summary.seq + 1,
      },
    };
  }

  async getSession(sessionId: string): Promise<SessionRecord | undefined> {
    return this.#database.read(() => readSession(this.#database, sessionId));
  }

  async listSessions(options: ListOptions = {}): Promise<SessionPage> {
    const query = parseListOptions(options);
    return toPage(
      this.#database.read(() => listSessionRows(this.#database, query)),
      query.limit,
    );
  }

  async searchSessions(query: string, options: SearchOptions = {}): Promise<SearchHit[]> {
    const terms = searchTerms(query);
    const { filter, limit } = parseSearchOptions(options);
    return this.#database.read(() => searchSessionRows(this.#database, terms, filter, limit));
  }

  async latestSession(filter: SessionFilter = {}): Promise<SessionRecord | undefined> {
    const checked = validate(sessionFilterSchema, filter, "session filter");
    return this.#database.read(() => latestSessionRow(this.#database, checked));
  }

  async forkSession(sessionId: string, options: ForkOptions): Promise<SessionRecord> {
    const id = checkSessionId(options.id ?? this.#context.ids("ses"));
    const title = options.title === undefined ? undefined : checkTitle(options.title);
    const database = this.#database;
    await this.#writer?.idle();
    return database.write(() => {
      const parent = readSession(database, sessionId);
      if (!parent) throw missing(sessionId);
      if (readSession(database, id))
        throw new ValidationError(`session ${id} already exists; choose another id for the fork`);
      const rows = forkRows(this.#rows(sessionId), options.atSeq, id);
      const now = this.#context.clock().toISOString();
      const record = forkRecord(parent, rows, {
        id,
        atSeq: options.atSeq,
        title,
        now,
        prices: this.#context.prices,
      });
      insertSession(database, record);
      for (const row of rows) this.#insert(row);
      database.run(
        "INSERT INTO blob_links (session_id, ref) SELECT ?, ref FROM blob_links WHERE session_id = ?",
        id,
        sessionId,
      );
      return record;
    });
  }

  async attachCompactSummary(sessionId: string, input: CompactSummaryInput): Promise<Message> {
    if (this.#writer)
      return this.#writer.call("attachCompactSummary", [sessionId, input], this.#context.clock());
    const database = this.#database;
    return database.write(() => {
      const row = database.get<MessageRow>(
        `${MESSAGE_SELECT} WHERE m.session_id = ? AND m.id = ?`,
        sessionId,
        input.messageId,
      );
      if (row === undefined) {
        if (!database.get("SELECT 1 FROM sessions WHERE id = ?", sessionId)) throw missing(sessionId);
        throw missingMessage(sessionId, input.messageId);
      }
      const message = withCompactSummary(messageFromRow(row, database.location), input.callId, input.summary);
      const { sessionId: _sessionId, ...body } = message;
      database.run(
        "UPDATE messages SET body = ? WHERE session_id = ? AND id = ?",
        JSON.stringify(body),
        sessionId,
        input.messageId,
      );
      return message;
    });
  }

  async renameSession(sessionId: string, title: string): Promise<SessionRecord> {
    const checked = checkTitle(title);
    if (this.#writer) return this.#writer.call("renameSession", [sessionId, checked], this.#context.clock());
    const database = this.#database;
    return database.write(() => {
      const changed = database.run(
        "UPDATE sessions SET title = ?, title_words = ? WHERE id = ?",
        checked,
        normalizeSearchText(checked),
        sessionId,
      );
      if (changed === 0) throw missing(sessionId);
      return readSession(database, sessionId)!;
    });
  }

  async deleteSession(sessionId: string): Promise<boolean> {
    if (this.#writer) return this.#writer.call("deleteSession", [sessionId], this.#context.clock());
    return this.#database.write(() => this.#delete(sessionId) !== undefined);
  }

  async cleanup(olderThanDays: number): Promise<CleanupResult> {
    const cutoff = retentionCutoff(olderThanDays, this.#context.clock());
    const database = this.#database;
    await this.#writer?.idle();
    return database.write(() => {
      let deletedSessions = 0;
      let deletedBlobs = 0;
      if (cutoff !== undefined) {
        for (const { id } of database.all<{ id: string }>(
          "SELECT id FROM sessions WHERE updated_at < ?",
          cutoff,
        )) {
          deletedBlobs += this.#delete(id) ?? 0;
          deletedSessions++;
        }
      }
      database.run("DELETE FROM blob_links WHERE session_id NOT IN (SELECT id FROM sessions)");
      deletedBlobs += database.run("DELETE FROM blobs WHERE ref NOT IN (SELECT ref FROM blob_links)");
      return { deletedSessions, deletedBlobs };
    });
  }

  async getSyncState(sessionId: string, agent: string): Promise<SyncState | undefined> {
    return this.#database.read(() => readSyncState(this.#database, sessionId, agent));
  }

  async setSyncState(
    sessionId: string,
    agent: string,
    cursor: JsonValue,
    executorSessionId?: string,
  ): Promise<SyncState> {
    const input = checkSyncInput(agent, cursor, executorSessionId);
    if (this.#writer) {
      const args = [sessionId, agent, cursor, executorSessionId];
      return this.#writer.call("setSyncState", args, this.#context.clock());
    }
    const database = this.#database;
    return database.write(() => {
      if (!database.get("SELECT 1 FROM sessions WHERE id = ?", sessionId)) throw missing(sessionId);
      const state: SyncState = { ...input, updatedAt: this.#context.clock().toISOString() };
      writeSyncState(database, sessionId, state);
      return state;
    });
  }

  async dumpSession(sessionId: string): Promise<SessionDump> {
    const database = this.#database;
    return database.read(() => {
      const session = readSession(database, sessionId);
      if (!session) throw missing(sessionId);
      return { session, rows: this.#rows(sessionId), ...readDumpExtras(database, sessionId) };
    });
  }

  async restoreSession(dump: SessionDump, options: RestoreOptions = {}): Promise<SessionRecord> {
    const checked = checkDump(dump, this.#context.inlineMediaLimit);
    await this.#writer?.idle();
    return this.#database.write(() => this.#restore(checked, options.onExisting ?? "error")!);
  }

  async restoreSessions(
    dumps: readonly SessionDump[],
    options: RestoreSessionsOptions = {},
  ): Promise<RestoreSessionsResult> {
    const checked = checkDumps(dumps, this.#context.inlineMediaLimit);
    const onExisting = options.onExisting ?? "error";
    await this.#writer?.idle();
    return this.#database.write(() => {
      const restored: SessionRecord[] = [];
      const skipped: string[] = [];
      for (const dump of checked) {
        const record = this.#restore(dump, onExisting);
        if (record) restored.push(record);
        else skipped.push(dump.session.id);
        options.onProgress?.(restored.length + skipped.length, checked.length);
      }
      return { restored, skipped };
    });
  }

  async close(): Promise<void> {
    await this.#writer?.close();
    this.#database.close();
  }

  /** Every row of a session in seq order. */
  #rows(sessionId: string): StoredRow[] {
    return this.#database
      .all<MessageRow>(`${MESSAGE_SELECT} WHERE m.session_id = ? ORDER BY m.seq`, sessionId)
      .map((row) => storedRowFromRow(row, this.#database.location));
  }

  /** Writes a checked dump inside the caller's transaction; undefined when it exists and is skipped. */
  #restore(dump: SessionDump, onExisting: "error" | "replace" | "skip"): SessionRecord | undefined {
    const database = this.#database;
    const id = dump.session.id;
    if (readSession(database, id)) {
      if (onExisting === "skip") return undefined;
      if (onExisting !== "replace") throw existingSessionError(id);
      this.#delete(id);
    }
    insertSession(database, dump.session);
    for (const row of dump.rows) this.#insert(row);
    for (const blob of dump.blobs) insertBlob(database, id, blob);
    for (const state of dump.syncStates) writeSyncState(database, id, state);
    return readSession(database, id)!;
  }

  #insert(row: StoredRow): void {
    try {
      insertRow(this.#database, row);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      throw new ValidationError(
        `message id "${row.message.id}" (seq ${row.message.seq}) is already stored in session ${row.message.sessionId}`,
        [],
        { cause: error },
      );
    }
  }

  /** Deletes a session inside the caller's transaction; returns the number of blobs removed with it. */
  #delete(sessionId: string): number | undefined {
    const database = this.#database;
    if (!database.get("SELECT 1 FROM sessions WHERE id = ?", sessionId)) return undefined;
    const refs = database
      .all<{ ref: string }>("SELECT ref FROM blob_links WHERE session_id = ?", sessionId)
      .map((row) => row.ref);
    database.run(
      "DELETE FROM message_words WHERE rowid IN (SELECT row_id FROM messages WHERE session_id = ?)",
      sessionId,
    );
    database.run("DELETE FROM sessions WHERE id = ?", sessionId);
    database.run("DELETE FROM blob_links WHERE session_id = ?", sessionId);
    database.run("UPDATE sessions SET parent_id = NULL, fork_seq = NULL WHERE parent_id = ?", sessionId);
    return collectBlobs(database, refs);
  }
}

/** Messages with an id each (drawn from the caller's generator, in the order an inline write would draw them). */
function withMessageIds(messages: readonly MessageInput[], ids: IdGenerator): readonly MessageInput[] {
  if (!Array.isArray(messages)) return messages;
  return messages.map((message: MessageInput) =>
    isObject(message) && message.id === undefined ? { ...message, id: ids("msg") } : message,
  );
}

/** Append options whose compaction summaries have ids. */
function withCompactionIds(options: AppendTurnOptions, ids: IdGenerator): AppendTurnOptions {
  if (!isObject(options) || !Array.isArray(options.compactions)) return options;
  return { ...options, compactions: options.compactions.map((input) => withSummaryId(input, ids)) };
}

function withSummaryId(input: CompactionInput, ids: IdGenerator): CompactionInput {
  if (!isObject(input) || !isObject(input.summary) || input.summary.id !== undefined) return input;
  return { ...input, summary: { ...input.summary, id: ids("sum") } };
}

const isObject = (value: unknown): value is object => typeof value === "object" && value !== null;

function missing(sessionId: string): NotFoundError {
  return new NotFoundError("session", sessionId, "list sessions to see which exist");
}
