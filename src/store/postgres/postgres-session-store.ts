import { NotFoundError, ValidationError } from "../../errors/index.ts";
import type { JsonValue, Message, MessageInput } from "../../model/message.ts";
import { withCompactSummary } from "../../model/compact-summary.ts";
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
import { PostgresBlobStore } from "./postgres-blob-store.ts";
import { sqlState, type PostgresDatabase, type PostgresQueries } from "./postgres-database.ts";
import {
  collectBlobs,
  insertBlobs,
  insertRows,
  insertSession,
  MESSAGE_SELECT,
  messageFromRow,
  readSession,
  storedRowFromRow,
  updateSessionTotals,
  type MessageRow,
} from "./postgres-rows.ts";
import { ADVISORY_LOCK_SPACE } from "./postgres-schema.ts";
import { readDumpExtras, readSyncState, writeSyncState } from "./postgres-session-extras.ts";
import { latestSessionRow, listSessionRows, searchSessionRows } from "./postgres-session-queries.ts";

const VIEW_ORDER = "ORDER BY m.position, m.seq DESC";

/** Serialises writers of one session across connections and servers, until the transaction ends. */
async function lockSession(queries: PostgresQueries, sessionId: string): Promise<void> {
  await queries.run("SELECT pg_advisory_xact_lock($1, hashtext($2))", [ADVISORY_LOCK_SPACE, sessionId]);
}

/** Inserts rows, reporting a message id stored twice as a `ValidationError`. */
async function insertMessages(queries: PostgresQueries, rows: readonly StoredRow[]): Promise<void> {
  try {
    await insertRows(queries, rows);
  } catch (error) {
    if (sqlState(error) !== "23505") throw error;
    const sessionId = rows[0]?.message.sessionId ?? "";
    throw new ValidationError(
      `a message id of this write is already stored in session ${sessionId}; use fresh ids`,
      [],
      {
        cause: error,
      },
    );
  }
}

/**
 * The session store for many agent servers sharing one PostgreSQL database (`pg` pool). Writers of one
 * session are serialised by a per-session advisory lock; readers use MVCC snapshots and never block them.
 * Create it with `openPostgresSessionStore`.
 */
export class PostgresSessionStore implements SessionStore {
  readonly blobs: PostgresBlobStore;
  readonly #database: PostgresDatabase;
  readonly #context: StoreContext;

  /** @internal Use `openPostgresSessionStore`. */
  constructor(database: PostgresDatabase, context: StoreContext) {
    this.#database = database;
    this.#context = context;
    this.blobs = new PostgresBlobStore(database);
  }

  /** @internal The pool wrapper, for tests and tools. */
  get database(): PostgresDatabase {
    return this.#database;
  }

  async appendTurn(
    sessionId: string,
    messages: readonly MessageInput[],
    options: AppendTurnOptions = {},
  ): Promise<AppendResult> {
    checkSessionId(sessionId);
    return this.#database.transaction(async (queries) => {
      await lockSession(queries, sessionId);
      const existing = await readSession(queries, sessionId);
      const head = existing ?? { nextSeq: 0, turnCount: 0 };
      const plan = planAppend(
        sessionId,
        { exists: existing !== undefined, ...head },
        messages,
        options,
        this.#context,
      );
      const base = existing ?? newSessionRecord(sessionId, options.session, plan);
      if (!existing) await insertSession(queries, base);
      await insertMessages(
        queries,
        plan.rows.map((message) => ({ message, position: message.seq })),
      );
      await insertBlobs(queries, sessionId, plan.blobs);
      let session = withTurn(base, plan);
      const summaries: Message[] = [];
      for (const compaction of options.compactions ?? []) {
        const compacted = await this.#compact(queries, session, checkCompactionInput(compaction));
        session = compacted.session;
        summaries.push(compacted.summary);
      }
      await updateSessionTotals(queries, session);
      await saveGovernorState(queries, session, options.governorState);
      return { session, messages: plan.rows, summaries };
    });
  }

  async loadGovernorState(sessionId: string): Promise<JsonValue | undefined> {
    const row = await this.#database.row<{ state: JsonValue }>(
      "SELECT g.state FROM {governor_states} g JOIN {sessions} s ON s.id = g.session_id AND s.next_seq = g.next_seq WHERE g.session_id = $1",
      [sessionId],
    );
    return row?.state;
  }

  async loadMessages(sessionId: string, options: LoadOptions = {}): Promise<Message[]> {
    const strategy = options.strategy ?? "full";
    const messages = await this.#database.snapshot(async (queries) => {
      const session = await readSession(queries, sessionId);
      if (!session) throw missing(sessionId);
      const where = ["m.session_id = $1"];
      const parameters: unknown[] = [sessionId];
      if (strategy !== "all") where.push("m.summarized_by IS NULL");
      if (strategy === "recent") {
        where.push("m.turn > $2");
        parameters.push(session.turnCount - recentTurnCount(options));
      }
      const rows = await queries.rows<MessageRow>(
        `${MESSAGE_SELECT} WHERE ${where.join(" AND ")} ${VIEW_ORDER}`,
        parameters,
      );
      return rows.map(messageFromRow);
    });
    const shaped = strategy === "recent" ? turnEnds(messages) : messages;
    return options.media === "inline" ? inlineMedia(shaped, this.blobs) : shaped;
  }

  async applyCompaction(sessionId: string, input: CompactionInput): Promise<Message> {
    const checked = checkCompactionInput(input);
    return this.#database.transaction(async (queries) => {
      await lockSession(queries, sessionId);
      const session = await readSession(queries, sessionId);
      if (!session) throw missing(sessionId);
      checkExpectedSeq(sessionId, checked.expectedNextSeq, session.nextSeq);
      const compacted = await this.#compact(queries, session, checked);
      await updateSessionTotals(queries, compacted.session);
      await saveGovernorState(queries, compacted.session, undefined);
      return compacted.summary;
    });
  }

  /** Applies a checked compaction inside the caller's transaction; returns the summary and the updated record. */
  async #compact(
    queries: PostgresQueries,
    session: SessionRecord,
    checked: CompactionInput,
  ): Promise<{ summary: Message; session: SessionRecord }> {
    const sessionId = session.id;
    const placeSql = "SELECT seq, position, turn FROM {messages} WHERE session_id = $1 AND seq = $2";
    const bounds = compactionBounds(sessionId, checked, {
      from: await queries.row<RowPlace>(placeSql, [sessionId, checked.fromSeq]),
      to: await queries.row<RowPlace>(placeSql, [sessionId, checked.toSeq]),
    });
    const visible = "FROM {messages} WHERE session_id = $1 AND summarized_by IS NULL";
    const replaced = await queries.rows<RowPlace>(
      `SELECT seq, position, turn ${visible} AND position BETWEEN $2 AND $3 ORDER BY position`,
      [sessionId, bounds.from, bounds.to],
    );
    const previous = await queries.row<RowPlace>(
      `SELECT seq, position, turn ${visible} AND position < $2 ORDER BY position DESC LIMIT 1`,
      [sessionId, replaced[0]?.position ?? bounds.from],
    );
    const plan = planCompaction(sessionId, checked, replaced, previous, session.nextSeq, this.#context);
    await queries.run(
      `UPDATE {messages} SET summarized_by = $1 WHERE session_id = $2 AND summarized_by IS NULL AND position BETWEEN $3 AND $4`,
      [plan.summary.seq, sessionId, bounds.from, bounds.to],
    );
    await insertMessages(queries, [{ message: plan.summary, position: plan.position }]);
    await insertBlobs(queries, sessionId, plan.blobs);
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
    return readSession(this.#database, sessionId);
  }

  async listSessions(options: ListOptions = {}): Promise<SessionPage> {
    const query = parseListOptions(options);
    return toPage(await listSessionRows(this.#database, query), query.limit);
  }

  async searchSessions(query: string, options: SearchOptions = {}): Promise<SearchHit[]> {
    const terms = searchTerms(query);
    const { filter, limit } = parseSearchOptions(options);
    return this.#database.snapshot((queries) => searchSessionRows(queries, terms, filter, limit));
  }

  async latestSession(filter: SessionFilter = {}): Promise<SessionRecord | undefined> {
    return latestSessionRow(this.#database, validate(sessionFilterSchema, filter, "session filter"));
  }

  async forkSession(sessionId: string, options: ForkOptions): Promise<SessionRecord> {
    const id = checkSessionId(options.id ?? this.#context.ids("ses"));
    const title = options.title === undefined ? undefined : checkTitle(options.title);
    return this.#database.transaction(async (queries) => {
      await lockSession(queries, id);
      const parent = await readSession(queries, sessionId);
      if (!parent) throw missing(sessionId);
      if (await readSession(queries, id))
        throw new ValidationError(`session ${id} already exists; choose another id for the fork`);
      const rows = forkRows(await this.#rows(queries, sessionId), options.atSeq, id);
      const now = this.#context.clock().toISOString();
      const record = forkRecord(parent, rows, {
        id,
        atSeq: options.atSeq,
        title,
        now,
        prices: this.#context.prices,
      });
      await insertSession(queries, record);
      await insertMessages(queries, rows);
      await queries.run(
        "INSERT INTO {blob_links} (session_id, ref) SELECT $1, ref FROM {blob_links} WHERE session_id = $2 ON CONFLICT DO NOTHING",
        [id, sessionId],
      );
      return record;
    });
  }

  async attachCompactSummary(sessionId: string, input: CompactSummaryInput): Promise<Message> {
    return this.#database.transaction(async (queries) => {
      await lockSession(queries, sessionId);
      const row = await queries.row<MessageRow>(`${MESSAGE_SELECT} WHERE m.session_id = $1 AND m.id = $2`, [
        sessionId,
        input.messageId,
      ]);
      if (row === undefined) {
        if ((await readSession(queries, sessionId)) === undefined) throw missing(sessionId);
        throw missingMessage(sessionId, input.messageId);
      }
      const message = withCompactSummary(messageFromRow(row), input.callId, input.summary);
      const { sessionId: _sessionId, ...body } = message;
      await queries.run("UPDATE {messages} SET body = $1 WHERE session_id = $2 AND id = $3", [
        JSON.stringify(body),
        sessionId,
        input.messageId,
      ]);
      return message;
    });
  }

  async renameSession(sessionId: string, title: string): Promise<SessionRecord> {
    const checked = checkTitle(title);
    return this.#database.transaction(async (queries) => {
      const changed = await queries.run("UPDATE {sessions} SET title = $1, title_words = $2 WHERE id = $3", [
        checked,
        normalizeSearchText(checked),
        sessionId,
      ]);
      if (changed === 0) throw missing(sessionId);
      return (await readSession(queries, sessionId))!;
    });
  }

  async deleteSession(sessionId: string): Promise<boolean> {
    return this.#database.transaction(
      async (queries) => (await this.#delete(queries, sessionId)) !== undefined,
    );
  }

  async cleanup(olderThanDays: number): Promise<CleanupResult> {
    const cutoff = retentionCutoff(olderThanDays, this.#context.clock());
    return this.#database.transaction(async (queries) => {
      let deletedSessions = 0;
      let deletedBlobs = 0;
      if (cutoff !== undefined) {
        for (const { id } of await queries.rows<{ id: string }>(
          "SELECT id FROM {sessions} WHERE updated_at < $1",
          [cutoff],
        )) {
          const removed = await this.#delete(queries, id);
          if (removed === undefined) continue;
          deletedBlobs += removed;
          deletedSessions++;
        }
      }
      await queries.run(
        "DELETE FROM {blob_links} l WHERE NOT EXISTS (SELECT 1 FROM {sessions} s WHERE s.id = l.session_id)",
      );
      const orphans = await queries.rows<{ ref: string }>(
        "SELECT b.ref FROM {blobs} b WHERE NOT EXISTS (SELECT 1 FROM {blob_links} l WHERE l.ref = b.ref)",
      );
      deletedBlobs += await collectBlobs(
        queries,
        orphans.map((row) => row.ref),
      );
      return { deletedSessions, deletedBlobs };
    });
  }

  async getSyncState(sessionId: string, agent: string): Promise<SyncState | undefined> {
    return readSyncState(this.#database, sessionId, agent);
  }

  async setSyncState(
    sessionId: string,
    agent: string,
    cursor: JsonValue,
    executorSessionId?: string,
  ): Promise<SyncState> {
    const input = checkSyncInput(agent, cursor, executorSessionId);
    return this.#database.transaction(async (queries) => {
      if (!(await queries.row("SELECT 1 FROM {sessions} WHERE id = $1", [sessionId])))
        throw missing(sessionId);
      const state: SyncState = { ...input, updatedAt: this.#context.clock().toISOString() };
      await writeSyncState(queries, sessionId, state);
      return state;
    });
  }

  async dumpSession(sessionId: string): Promise<SessionDump> {
    return this.#database.snapshot(async (queries) => {
      const session = await readSession(queries, sessionId);
      if (!session) throw missing(sessionId);
      return {
        session,
        rows: await this.#rows(queries, sessionId),
        ...(await readDumpExtras(queries, sessionId)),
      };
    });
  }

  async restoreSession(dump: SessionDump, options: RestoreOptions = {}): Promise<SessionRecord> {
    const checked = checkDump(dump, this.#context.inlineMediaLimit);
    const onExisting = options.onExisting ?? "error";
    return this.#database.transaction(
      async (queries) => (await this.#restore(queries, checked, onExisting))!,
    );
  }

  async restoreSessions(
    dumps: readonly SessionDump[],
    options: RestoreSessionsOptions = {},
  ): Promise<RestoreSessionsResult> {
    const checked = checkDumps(dumps, this.#context.inlineMediaLimit);
    const onExisting = options.onExisting ?? "error";
    return this.#database.transaction(async (queries) => {
      const restored: SessionRecord[] = [];
      const skipped: string[] = [];
      for (const dump of checked) {
        const record = await this.#restore(queries, dump, onExisting);
        if (record) restored.push(record);
        else skipped.push(dump.session.id);
        options.onProgress?.(restored.length + skipped.length, checked.length);
      }
      return { restored, skipped };
    });
  }

  /** Writes a checked dump inside the caller's transaction; undefined when it exists and is skipped. */
  async #restore(
    queries: PostgresQueries,
    dump: SessionDump,
    onExisting: "error" | "replace" | "skip",
  ): Promise<SessionRecord | undefined> {
    const id = dump.session.id;
    await lockSession(queries, id);
    if (await readSession(queries, id)) {
      if (onExisting === "skip") return undefined;
      if (onExisting !== "replace") throw existingSessionError(id);
      await this.#delete(queries, id);
    }
    await insertSession(queries, dump.session);
    await insertMessages(queries, dump.rows);
    await insertBlobs(queries, id, dump.blobs);
    for (const state of dump.syncStates) await writeSyncState(queries, id, state);
    return (await readSession(queries, id))!;
  }

  async close(): Promise<void> {
    await this.#database.close();
  }

  async #rows(queries: PostgresQueries, sessionId: string): Promise<StoredRow[]> {
    const rows = await queries.rows<MessageRow>(`${MESSAGE_SELECT} WHERE m.session_id = $1 ORDER BY m.seq`, [
      sessionId,
    ]);
    return rows.map(storedRowFromRow);
  }

  /** Deletes a session inside the caller's transaction; returns the number of blobs removed with it. */
  async #delete(queries: PostgresQueries, sessionId: string): Promise<number | undefined> {
    await lockSession(queries, sessionId);
    const deleted = await queries.run("DELETE FROM {sessions} WHERE id = $1", [sessionId]);
    if (deleted === 0) return undefined;
    const links = await queries.rows<{ ref: string }>(
      "DELETE FROM {blob_links} WHERE session_id = $1 RETURNING ref",
      [sessionId],
    );
    await queries.run("UPDATE {sessions} SET parent_id = NULL, fork_seq = NULL WHERE parent_id = $1", [
      sessionId,
    ]);
    return collectBlobs(
      queries,
      links.map((link) => link.ref),
    );
  }
}

function missing(sessionId: string): NotFoundError {
  return new NotFoundError("session", sessionId, "list sessions to see which exist");
}

/** Stores (or, with none, drops) the governor state of the session as just written, inside the transaction. */
async function saveGovernorState(
  queries: PostgresQueries,
  session: SessionRecord,
  state: JsonValue | undefined,
): Promise<void> {
  if (state === undefined) {
    await queries.run("DELETE FROM {governor_states} WHERE session_id = $1", [session.id]);
    return;
  }
  await queries.run(
    "INSERT INTO {governor_states} (session_id, next_seq, state) VALUES ($1, $2, $3) ON CONFLICT (session_id) DO UPDATE SET next_seq = excluded.next_seq, state = excluded.state",
    [session.id, session.nextSeq, JSON.stringify(state)],
  );
}
