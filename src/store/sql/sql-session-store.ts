import { NotFoundError, ValidationError } from "../../errors/index.ts";
import type { JsonValue, Message, MessageInput } from "../../model/message.ts";
import { withCompactSummary } from "../../model/compact-summary.ts";
import { validate } from "../../model/schemas.ts";
import { checkExpectedSeq, checkSessionId, planAppend } from "../append-plan.ts";
import { checkCompactionInput, compactionBounds, planCompaction, type RowPlace } from "../compaction-plan.ts";
import { withReferencedBlobs } from "../dump-blobs.ts";
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
import { preparedQuery } from "./prepared-query.ts";
import { SqlBlobStore } from "./sql-blob-store.ts";
import type { SqlDatabase, SqlQueries } from "./sql-database.ts";
import {
  readBlob,
  readDumpExtras,
  readGovernorState,
  readSyncState,
  writeGovernorState,
  writeSyncState,
} from "./session-extras.ts";
import { latestSessionRow, listSessionRows, searchSessionRows } from "./session-queries.ts";
import { KnownSessions } from "./known-sessions.ts";
import { removeLastRow } from "./remove-last-row.ts";
import { WordsDrain } from "./words-drain.ts";
import {
  bodySelect,
  collectBlobs,
  insertBlobs,
  insertSession,
  messageFromRow,
  messageOfBody,
  messageSelect,
  readSession,
  readSessionForWrite,
  sessionFromRow,
  storedRowFromRow,
  updateSessionTotals,
  type BodyRow,
  type MessageRow,
} from "./session-rows.ts";

/** A session's messages in view order, per load strategy (`all` includes the rows summaries replaced). */
const VIEW = {
  all: preparedQuery<{ session_id: string; after_turn: number }, BodyRow>((database, p) =>
    bodySelect(database)
      .where("m.session_id", "=", p("session_id"))
      .orderBy("m.position")
      .orderBy("m.seq", "desc"),
  ),
  full: preparedQuery<{ session_id: string; after_turn: number }, BodyRow>((database, p) =>
    bodySelect(database)
      .where("m.session_id", "=", p("session_id"))
      .where("m.summarized_by", "is", null)
      .orderBy("m.position")
      .orderBy("m.seq", "desc"),
  ),
  recent: preparedQuery<{ session_id: string; after_turn: number }, BodyRow>((database, p) =>
    bodySelect(database)
      .where("m.session_id", "=", p("session_id"))
      .where("m.summarized_by", "is", null)
      .where("m.turn", ">", p("after_turn"))
      .orderBy("m.position")
      .orderBy("m.seq", "desc"),
  ),
};

/** Rows a turn may have to go in one statement with its session's row (`#appendSingle`). */
const SINGLE_STATEMENT_ROWS = 1000;

/** The head of a session not stored yet. */
const NEW_SESSION = { exists: false, nextSeq: 0, turnCount: 0 } as const;

/**
 * The session store on a ctxkit SQL database, one implementation for SQLite and PostgreSQL: every write is one
 * transaction (on PostgreSQL, writers of one session are serialised by an advisory lock), reads see one
 * snapshot. `SqliteSessionStore` and `PostgresSessionStore` are this store on their database.
 */
export class SqlSessionStore implements SessionStore {
  readonly blobs: SqlBlobStore;
  readonly #database: SqlDatabase;
  readonly #context: StoreContext;
  /** Indexes the words of the rows this store's writes queued, after they commit (none when read-only). */
  readonly #words: WordsDrain | undefined;
  /** The sessions this store appended to lately, as it left them (see `#appendKnown`). */
  readonly #known = new KnownSessions();

  /**
   * @internal Use `openSqliteSessionStore` or `openPostgresSessionStore`. `blobs` replaces the blob store on the
   * same database (the SQLite store's, whose writes go to its writer thread). `indexWords: false` leaves the
   * queued words to another store on the same database (the SQLite writer thread's).
   */
  constructor(database: SqlDatabase, context: StoreContext, blobs?: SqlBlobStore, indexWords = true) {
    this.#database = database;
    this.#context = context;
    this.blobs = blobs ?? new SqlBlobStore(database);
    this.#words =
      indexWords && database.canWriteApart
        ? new WordsDrain({
            indexBatch: (limit) =>
              database.writeApart((queries) => database.dialect.indexWaitingWords(database, queries, limit)),
            canRun: () => database.canWriteApart,
            // SQLite has one writer: it catches up between two writes. PostgreSQL drains on a connection of its
            // own while appends go on.
            catchUp: database.dialect.name === "sqlite",
          })
        : undefined;
  }

  /**
   * @internal Starts indexing the words every earlier process left queued (one killed between a turn's commit
   * and its drain), in the background; the store's opener calls it once.
   */
  startIndexing(): void {
    this.#words?.flushInBackground();
  }

  /** @internal Between two writes: indexes the queued words when a batch waits (SQLite's writer thread). */
  async catchUpSearchIndex(): Promise<void> {
    await this.#words?.drainDue();
  }

  /** @internal Indexes every queued message's words now (tests, benches); search never needs it. */
  async flushSearchIndex(): Promise<void> {
    await this.#words?.flush();
  }

  async appendTurn(
    sessionId: string,
    messages: readonly MessageInput[],
    options: AppendTurnOptions = {},
  ): Promise<AppendResult> {
    checkSessionId(sessionId);
    const database = this.#database;
    await this.#words?.drainDue();
    const single = await this.#appendSingle(sessionId, messages, options);
    if (single !== undefined) return single;
    // Writers of the session are serialised by its lock, taken with the transaction.
    const result = await database.write(async (queries) => {
      const found = await readSessionForWrite(database, queries, sessionId);
      const existing = found?.session;
      const head = existing ?? { nextSeq: 0, turnCount: 0 };
      const plan = planAppend(
        sessionId,
        { exists: existing !== undefined, ...head },
        messages,
        options,
        this.#context,
      );
      const base = existing ?? newSessionRecord(sessionId, options.session, plan);
      const rows = plan.rows.map((message) => ({ message, position: message.seq }));
      const compactions = options.compactions ?? [];
      let session = withTurn(base, plan);
      const summaries: Message[] = [];
      if (compactions.length === 0) {
        // The common turn: the session row is written once, with its new totals (with the rows, where the
        // dialect can do that in one statement).
        if (existing) await this.#insert(queries, rows, session);
        else {
          await insertSession(database, queries, session);
          await this.#insert(queries, rows);
        }
        await insertBlobs(database, queries, sessionId, plan.blobs);
      } else {
        if (!existing) await insertSession(database, queries, base);
        await this.#insert(queries, rows);
        await insertBlobs(database, queries, sessionId, plan.blobs);
        for (const compaction of compactions) {
          const compacted = await this.#compact(queries, session, checkCompactionInput(compaction));
          session = compacted.session;
          summaries.push(compacted.summary);
        }
        await updateSessionTotals(database, queries, session);
      }
      // With no state to store and none stored, there is nothing to drop.
      if (options.governorState !== undefined || found?.governed === true) {
        await writeGovernorState(database, queries, session.id, session.nextSeq, options.governorState);
      }
      return { session, messages: plan.rows, summaries };
    }, sessionId);
    this.#known.remember(result.session);
    this.#words?.noteWritten(result.messages.length + result.summaries.length);
    return result;
  }

  /**
   * A turn in one statement, where the dialect has them (PostgreSQL): to a session this store wrote last
   * (`#appendKnown`), to one the caller expects to be new (`#appendFirst`), or to another one after reading it
   * with one autocommitted query (two round trips, against three or four for the transaction). Undefined when
   * none applies or the session was not as planned (nothing written): the caller then appends in a transaction,
   * which reads the session under its lock and refuses or appends as it always does.
   */
  async #appendSingle(
    sessionId: string,
    messages: readonly MessageInput[],
    options: AppendTurnOptions,
  ): Promise<AppendResult | undefined> {
    const database = this.#database;
    const { dialect } = database;
    if (
      dialect.appendKnown === undefined ||
      dialect.appendFirst === undefined ||
      database.writeOne === undefined ||
      (options.compactions?.length ?? 0) > 0
    )
      return undefined;
    const known = this.#known.get(sessionId);
    if (known !== undefined) return this.#appendKnown(known, messages, options);
    if (options.expectedNextSeq === 0) return this.#appendFirst(sessionId, messages, options);
    const stored = await readSession(database, database.queries, sessionId);
    if (stored !== undefined) return this.#appendKnown(stored, messages, options);
    // Not stored, and expected at a later seq: the transaction refuses it.
    return options.expectedNextSeq === undefined
      ? this.#appendFirst(sessionId, messages, options)
      : undefined;
  }

  /**
   * The common turn of a session stored as `stored` (as this store left it, or as it just read it), in one
   * statement (`appendKnown`): planned on that record, written only if the session is still stored so.
   * Undefined when the caller's expectations do not match it or the session changed meanwhile.
   */
  async #appendKnown(
    stored: SessionRecord,
    messages: readonly MessageInput[],
    options: AppendTurnOptions,
  ): Promise<AppendResult | undefined> {
    const database = this.#database;
    const sessionId = stored.id;
    if (
      (options.expectedNextSeq !== undefined && options.expectedNextSeq !== stored.nextSeq) ||
      (options.expectedOwner !== undefined && options.expectedOwner !== (stored.owner ?? null))
    )
      return undefined;
    const head = { exists: true, nextSeq: stored.nextSeq, turnCount: stored.turnCount, owner: stored.owner };
    const plan = planAppend(sessionId, head, messages, options, this.#context);
    if (plan.blobs.length > 0 || plan.rows.length > SINGLE_STATEMENT_ROWS) return undefined;
    const rows = plan.rows.map((message) => ({ message, position: message.seq }));
    const row = await database.writeOne!((queries) =>
      this.#insertChecked(rows, () =>
        database.dialect.appendKnown!(
          database,
          queries,
          stored,
          withTurn(stored, plan),
          rows,
          options.governorState,
        ),
      ),
    );
    if (row === undefined) {
      this.#known.forget(sessionId);
      return undefined;
    }
    const session = sessionFromRow(row, database.location);
    this.#known.remember(session);
    this.#words?.noteWritten(rows.length);
    return { session, messages: plan.rows, summaries: [] };
  }

  /**
   * The first turn of a session not stored, creating it in one statement (`appendFirst`): planned as a new
   * session, written only if none of its id is stored when the statement runs. Undefined when the turn cannot
   * be a new session's or the session exists.
   */
  async #appendFirst(
    sessionId: string,
    messages: readonly MessageInput[],
    options: AppendTurnOptions,
  ): Promise<AppendResult | undefined> {
    const database = this.#database;
    let plan;
    try {
      plan = planAppend(sessionId, NEW_SESSION, messages, options, this.#context);
    } catch (error) {
      // Refused as a new session's turn (one that opens no turn, say): the transaction, which knows whether the
      // session exists, refuses it or appends it.
      if (error instanceof ValidationError) return undefined;
      throw error;
    }
    if (plan.blobs.length > 0 || plan.rows.length > SINGLE_STATEMENT_ROWS) return undefined;
    const session = withTurn(newSessionRecord(sessionId, options.session, plan), plan);
    const rows = plan.rows.map((message) => ({ message, position: message.seq }));
    const created = await database.writeOne!((queries) =>
      this.#insertChecked(rows, () =>
        database.dialect.appendFirst!(database, queries, session, rows, options.governorState),
      ),
    );
    if (!created) return undefined;
    this.#known.remember(session);
    this.#words?.noteWritten(rows.length);
    return { session, messages: plan.rows, summaries: [] };
  }

  async loadGovernorState(sessionId: string): Promise<JsonValue | undefined> {
    return readGovernorState(this.#database, this.#database.queries, sessionId);
  }

  async loadMessages(sessionId: string, options: LoadOptions = {}): Promise<Message[]> {
    const database = this.#database;
    const strategy = options.strategy ?? "full";
    const messages = await database.read(
      async (queries) => {
        const session = await readSession(database, queries, sessionId);
        if (!session) throw missing(sessionId);
        const afterTurn = strategy === "recent" ? session.turnCount - recentTurnCount(options) : -1;
        // Rows as tuples: a long history is mostly parsing its bodies, and an object per row added a tenth.
        const rows = await queries.tuples<BodyRow>(
          (VIEW[strategy] ?? VIEW.full).bind(database, { session_id: sessionId, after_turn: afterTurn }),
        );
        return rows.map(([seq, body]) => messageOfBody(sessionId, seq, body, database.location));
      },
      { indexOrder: strategy !== "recent" },
    );
    const shaped = strategy === "recent" ? turnEnds(messages) : messages;
    return options.media === "inline" ? inlineMedia(shaped, this.blobs) : shaped;
  }

  async applyCompaction(sessionId: string, input: CompactionInput): Promise<Message> {
    const checked = checkCompactionInput(input);
    const database = this.#database;
    const summary = await database.write(async (queries) => {
      await database.dialect.lock(queries, sessionId);
      const session = await readSession(database, queries, sessionId);
      if (!session) throw missing(sessionId);
      checkExpectedSeq(sessionId, checked.expectedNextSeq, session.nextSeq);
      const compacted = await this.#compact(queries, session, checked);
      await updateSessionTotals(database, queries, compacted.session);
      await writeGovernorState(database, queries, sessionId, compacted.session.nextSeq, undefined);
      return compacted.summary;
    });
    this.#words?.noteWritten(1);
    return summary;
  }

  /** Applies a checked compaction inside the caller's transaction; returns the summary and the updated record. */
  async #compact(
    queries: SqlQueries,
    session: SessionRecord,
    checked: CompactionInput,
  ): Promise<{ summary: Message; session: SessionRecord }> {
    const database = this.#database;
    const { builder } = database;
    const sessionId = session.id;
    const place = (seq: number) =>
      queries.first<RowPlace>(
        builder
          .selectFrom("messages")
          .select(["seq", "position", "turn"])
          .where("session_id", "=", sessionId)
          .where("seq", "=", seq),
      );
    const bounds = compactionBounds(sessionId, checked, {
      from: await place(checked.fromSeq),
      to: await place(checked.toSeq),
    });
    const visible = builder
      .selectFrom("messages")
      .select(["seq", "position", "turn"])
      .where("session_id", "=", sessionId)
      .where("summarized_by", "is", null);
    const replaced = await queries.all<RowPlace>(
      visible.where("position", ">=", bounds.from).where("position", "<=", bounds.to).orderBy("position"),
    );
    const previous = await queries.first<RowPlace>(
      visible
        .where("position", "<", replaced[0]?.position ?? bounds.from)
        .orderBy("position", "desc")
        .limit(1),
    );
    const plan = planCompaction(sessionId, checked, replaced, previous, session.nextSeq, this.#context);
    await queries.run(
      builder
        .updateTable("messages")
        .set({ summarized_by: plan.summary.seq })
        .where("session_id", "=", sessionId)
        .where("summarized_by", "is", null)
        .where("position", ">=", bounds.from)
        .where("position", "<=", bounds.to),
    );
    await this.#insert(queries, [{ message: plan.summary, position: plan.position }]);
    await insertBlobs(database, queries, sessionId, plan.blobs);
    return {
      summary: plan.summary,
      session: {
        ...withDelta(session, plan.delta, plan.now),
        messageCount: session.messageCount + 1,
        nextSeq: plan.summary.seq + 1,
      },
    };
  }

  async removeLastMessage(sessionId: string): Promise<Message | undefined> {
    const now = this.#context.clock().toISOString();
    const removed = await this.#database.write(
      (queries) => removeLastRow(this.#database, queries, sessionId, now),
      sessionId,
    );
    if (removed === undefined) return undefined;
    this.#known.remember(removed.session);
    return removed.row.message;
  }

  async getSession(sessionId: string): Promise<SessionRecord | undefined> {
    return readSession(this.#database, this.#database.queries, sessionId);
  }

  async listSessions(options: ListOptions = {}): Promise<SessionPage> {
    const query = parseListOptions(options);
    return toPage(await listSessionRows(this.#database, this.#database.queries, query), query.limit);
  }

  async searchSessions(query: string, options: SearchOptions = {}): Promise<SearchHit[]> {
    const terms = searchTerms(query);
    const { filter, limit } = parseSearchOptions(options);
    return this.#database.read((queries) => searchSessionRows(this.#database, queries, terms, filter, limit));
  }

  async latestSession(filter: SessionFilter = {}): Promise<SessionRecord | undefined> {
    const checked = validate(sessionFilterSchema, filter, "session filter");
    return latestSessionRow(this.#database, this.#database.queries, checked);
  }

  async forkSession(sessionId: string, options: ForkOptions): Promise<SessionRecord> {
    const id = checkSessionId(options.id ?? this.#context.ids("ses"));
    const title = options.title === undefined ? undefined : checkTitle(options.title);
    const database = this.#database;
    const fork = await database.write(async (queries) => {
      await database.dialect.lock(queries, id);
      const parent = await readSession(database, queries, sessionId);
      if (!parent) throw missing(sessionId);
      if (await readSession(database, queries, id))
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
      await insertSession(database, queries, record);
      await this.#insert(queries, rows);
      await queries.run(
        database.builder
          .insertInto("blob_links")
          .columns(["session_id", "ref"])
          .expression((eb) =>
            eb
              .selectFrom("blob_links")
              .select([eb.val(id).as("session_id"), "ref"])
              .where("session_id", "=", sessionId),
          )
          .onConflict((conflict) => conflict.doNothing()),
      );
      return record;
    });
    this.#words?.noteWritten(fork.messageCount);
    return fork;
  }

  async attachCompactSummary(sessionId: string, input: CompactSummaryInput): Promise<Message> {
    const database = this.#database;
    return database.write(async (queries) => {
      await database.dialect.lock(queries, sessionId);
      const row = await queries.first<MessageRow>(
        messageSelect(database).where("m.session_id", "=", sessionId).where("m.id", "=", input.messageId),
      );
      if (row === undefined) {
        if ((await readSession(database, queries, sessionId)) === undefined) throw missing(sessionId);
        throw missingMessage(sessionId, input.messageId);
      }
      const message = withCompactSummary(messageFromRow(row, database.location), input.callId, input.summary);
      const { sessionId: _sessionId, ...body } = message;
      await queries.run(
        database.builder
          .updateTable("messages")
          .set({ body: JSON.stringify(body) })
          .where("session_id", "=", sessionId)
          .where("id", "=", input.messageId),
      );
      return message;
    });
  }

  async renameSession(sessionId: string, title: string): Promise<SessionRecord> {
    const checked = checkTitle(title);
    const database = this.#database;
    return database.write(async (queries) => {
      const changed = await queries.run(
        database.builder
          .updateTable("sessions")
          .set({ title: checked, title_words: normalizeSearchText(checked) })
          .where("id", "=", sessionId),
      );
      if (changed === 0) throw missing(sessionId);
      return (await readSession(database, queries, sessionId))!;
    });
  }

  async deleteSession(sessionId: string): Promise<boolean> {
    return this.#database.write(async (queries) => (await this.#delete(queries, sessionId)) !== undefined);
  }

  async cleanup(olderThanDays: number): Promise<CleanupResult> {
    const cutoff = retentionCutoff(olderThanDays, this.#context.clock());
    const database = this.#database;
    const { builder } = database;
    return database.write(async (queries) => {
      let deletedSessions = 0;
      let deletedBlobs = 0;
      if (cutoff !== undefined) {
        const old = await queries.all<{ id: string }>(
          // By id: the order the search drain locks sessions' rows in (PostgreSQL), so the two cannot deadlock.
          builder.selectFrom("sessions").select("id").where("updated_at", "<", cutoff).orderBy("id"),
        );
        for (const { id } of old) {
          const removed = await this.#delete(queries, id);
          if (removed === undefined) continue;
          deletedBlobs += removed;
          deletedSessions++;
        }
      }
      await queries.run(
        builder
          .deleteFrom("blob_links as l")
          .where((eb) =>
            eb.not(
              eb.exists(eb.selectFrom("sessions as s").select("s.id").whereRef("s.id", "=", "l.session_id")),
            ),
          ),
      );
      const orphans = await queries.all<{ ref: string }>(
        builder
          .selectFrom("blobs as b")
          .select("b.ref")
          .where((eb) =>
            eb.not(
              eb.exists(eb.selectFrom("blob_links as l").select("l.ref").whereRef("l.ref", "=", "b.ref")),
            ),
          ),
      );
      deletedBlobs += await collectBlobs(
        database,
        queries,
        orphans.map((row) => row.ref),
      );
      return { deletedSessions, deletedBlobs };
    });
  }

  async getSyncState(sessionId: string, agent: string): Promise<SyncState | undefined> {
    return readSyncState(this.#database, this.#database.queries, sessionId, agent);
  }

  async setSyncState(
    sessionId: string,
    agent: string,
    cursor: JsonValue,
    executorSessionId?: string,
  ): Promise<SyncState> {
    const input = checkSyncInput(agent, cursor, executorSessionId);
    const database = this.#database;
    // Under the session's lock (PostgreSQL): no delete commits between the check and the write.
    return database.write(async (queries) => {
      const exists = await queries.first(
        database.builder.selectFrom("sessions").select("id").where("id", "=", sessionId),
      );
      if (!exists) throw missing(sessionId);
      const state: SyncState = { ...input, updatedAt: this.#context.clock().toISOString() };
      await writeSyncState(database, queries, sessionId, state);
      return state;
    }, sessionId);
  }

  async dumpSession(sessionId: string): Promise<SessionDump> {
    const database = this.#database;
    return database.read(
      async (queries) => {
        const session = await readSession(database, queries, sessionId);
        if (!session) throw missing(sessionId);
        return {
          session,
          rows: await this.#rows(queries, sessionId),
          ...(await readDumpExtras(database, queries, sessionId)),
        };
      },
      { indexOrder: true },
    );
  }

  async restoreSession(dump: SessionDump, options: RestoreOptions = {}): Promise<SessionRecord> {
    const checked = checkDump(dump, this.#context.inlineMediaLimit);
    const onExisting = options.onExisting ?? "error";
    const record = await this.#database.write(async (queries) => {
      const [complete] = await this.#withReferencedBlobs(queries, [checked]);
      return (await this.#restore(queries, complete!, onExisting))!;
    });
    this.#words?.noteWritten(checked.rows.length);
    return record;
  }

  async restoreSessions(
    dumps: readonly SessionDump[],
    options: RestoreSessionsOptions = {},
  ): Promise<RestoreSessionsResult> {
    const checked = checkDumps(dumps, this.#context.inlineMediaLimit);
    const onExisting = options.onExisting ?? "error";
    const result = await this.#database.write(async (queries) => {
      const complete = await this.#withReferencedBlobs(queries, checked);
      const restored: SessionRecord[] = [];
      const skipped: string[] = [];
      for (const dump of complete) {
        const record = await this.#restore(queries, dump, onExisting);
        if (record) restored.push(record);
        else skipped.push(dump.session.id);
        options.onProgress?.(restored.length + skipped.length, complete.length);
      }
      return { restored, skipped };
    });
    this.#words?.noteWritten(checked.reduce((rows, dump) => rows + dump.rows.length, 0));
    return result;
  }

  async close(): Promise<void> {
    await this.#words?.close();
    await this.#database.close();
  }

  /** The dumps with the stored blobs their media refer to but they do not carry (see `withReferencedBlobs`). */
  #withReferencedBlobs(queries: SqlQueries, dumps: readonly SessionDump[]): Promise<SessionDump[]> {
    return withReferencedBlobs(dumps, (ref) => readBlob(this.#database, queries, ref));
  }

  /** Writes a checked dump inside the caller's transaction; undefined when it exists and is skipped. */
  async #restore(
    queries: SqlQueries,
    dump: SessionDump,
    onExisting: "error" | "replace" | "skip",
  ): Promise<SessionRecord | undefined> {
    const database = this.#database;
    const id = dump.session.id;
    await database.dialect.lock(queries, id);
    if (await readSession(database, queries, id)) {
      if (onExisting === "skip") return undefined;
      if (onExisting !== "replace") throw existingSessionError(id);
      await this.#delete(queries, id);
    }
    await insertSession(database, queries, dump.session);
    await this.#insert(queries, dump.rows);
    await insertBlobs(database, queries, id, dump.blobs);
    for (const state of dump.syncStates) await writeSyncState(database, queries, id, state);
    return (await readSession(database, queries, id))!;
  }

  /** Every row of a session in seq order. */
  async #rows(queries: SqlQueries, sessionId: string): Promise<StoredRow[]> {
    const rows = await queries.all<MessageRow>(
      messageSelect(this.#database).where("m.session_id", "=", sessionId).orderBy("m.seq"),
    );
    return rows.map((row) => storedRowFromRow(row, this.#database.location));
  }

  /**
   * Inserts rows (and, given `totals`, writes that record's totals to its session row), reporting a message id
   * stored twice as a `ValidationError`.
   */
  async #insert(queries: SqlQueries, rows: readonly StoredRow[], totals?: SessionRecord): Promise<void> {
    const database = this.#database;
    await this.#insertChecked(rows, () => database.dialect.insertMessages(database, queries, rows, totals));
  }

  /** Runs `insert` of `rows`, reporting a message id stored twice as a `ValidationError`. */
  async #insertChecked<T>(rows: readonly StoredRow[], insert: () => Promise<T>): Promise<T> {
    const database = this.#database;
    try {
      return await insert();
    } catch (error) {
      if (!database.dialect.isUniqueViolation(error)) throw error;
      const [row] = rows;
      throw new ValidationError(
        rows.length === 1 && row
          ? `message id "${row.message.id}" (seq ${row.message.seq}) is already stored in session ${row.message.sessionId}`
          : `a message id of this write is already stored in session ${row?.message.sessionId ?? ""}; use fresh ids`,
        [],
        { cause: error },
      );
    }
  }

  /** Deletes a session inside the caller's transaction; returns the number of blobs removed with it. */
  async #delete(queries: SqlQueries, sessionId: string): Promise<number | undefined> {
    const database = this.#database;
    const { builder } = database;
    await database.dialect.lock(queries, sessionId);
    await database.dialect.beforeDeletingMessages(database, queries, sessionId);
    // Its rows first: PostgreSQL's do not cascade from the session row (schema version 6).
    await queries.run(builder.deleteFrom("messages").where("session_id", "=", sessionId));
    const deleted = await queries.run(builder.deleteFrom("sessions").where("id", "=", sessionId));
    if (deleted === 0) return undefined;
    const links = await queries.all<{ ref: string }>(
      builder.deleteFrom("blob_links").where("session_id", "=", sessionId).returning("ref"),
    );
    await queries.run(
      builder
        .updateTable("sessions")
        .set({ parent_id: null, fork_seq: null })
        .where("parent_id", "=", sessionId),
    );
    return collectBlobs(
      database,
      queries,
      links.map((link) => link.ref),
    );
  }
}

function missing(sessionId: string): NotFoundError {
  return new NotFoundError("session", sessionId, "list sessions to see which exist");
}
