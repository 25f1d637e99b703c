/** Reading and writing session, message and blob rows of a ctxkit SQL database (SQLite and PostgreSQL). */
import { sql } from "kysely";
import { CorruptStoreError, DamagedMessageError } from "../../errors/index.ts";
import type { Message } from "../../model/message.ts";
import { normalizeSearchText } from "../search-text.ts";
import type { BlobData, SessionRecord, StoredRow } from "../session-store.ts";
import { preparedQuery } from "./prepared-query.ts";
import type { SqlDatabase, SqlQueries, SqlTarget } from "./sql-database.ts";

/** A `sessions` row with its executor ids, as `sessionSelect` returns it. */
export interface SessionRow {
  readonly id: string;
  readonly owner: string | null;
  readonly agent: string | null;
  readonly title: string | null;
  readonly created_at: string;
  readonly updated_at: string;
  readonly parent_id: string | null;
  readonly fork_seq: number | null;
  readonly message_count: number;
  readonly turn_count: number;
  readonly next_seq: number;
  readonly input_tokens: number | string;
  readonly output_tokens: number | string;
  readonly cache_read_tokens: number | string;
  readonly cache_write_tokens: number | string;
  readonly reasoning_tokens: number | string;
  readonly cost: number;
  readonly metadata: string;
  readonly origin: string | null;
  readonly executors: string | null;
}

/** Selects sessions (alias `s`) with their metadata as written and their executor session ids. */
export function sessionSelect({ builder, dialect }: SqlTarget) {
  return builder
    .selectFrom("sessions as s")
    .select([
      "s.id",
      "s.owner",
      "s.agent",
      "s.title",
      "s.created_at",
      "s.updated_at",
      "s.parent_id",
      "s.fork_seq",
      "s.message_count",
      "s.turn_count",
      "s.next_seq",
      "s.input_tokens",
      "s.output_tokens",
      "s.cache_read_tokens",
      "s.cache_write_tokens",
      "s.reasoning_tokens",
      "s.cost",
      dialect.sessionMetadata.as("metadata"),
      dialect.jsonText("s.origin").as("origin"),
      dialect.executorsJson.as("executors"),
    ]);
}

/** Parses JSON read from the database; damaged JSON raises `CorruptStoreError` naming what it belongs to. */
export function parseStored(text: string, location: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CorruptStoreError(location, `${what} is damaged (its stored JSON cannot be read)`, {
      cause: error,
    });
  }
}

/** The record of a `sessions` row (PostgreSQL's bigint totals arrive as strings). */
export function sessionFromRow(row: SessionRow, location: string): SessionRecord {
  const json = (text: string, field: string) =>
    parseStored(text, location, `the ${field} of session "${row.id}"`);
  const executors = json(row.executors ?? "{}", "sync states") as Record<string, string>;
  return {
    id: row.id,
    ...(row.owner !== null && { owner: row.owner }),
    ...(row.agent !== null && { agent: row.agent }),
    ...(row.title !== null && { title: row.title }),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.parent_id !== null && { parentId: row.parent_id }),
    ...(row.fork_seq !== null && { forkSeq: row.fork_seq }),
    messageCount: row.message_count,
    turnCount: row.turn_count,
    nextSeq: row.next_seq,
    usage: {
      input: Number(row.input_tokens),
      output: Number(row.output_tokens),
      cacheRead: Number(row.cache_read_tokens),
      cacheWrite: Number(row.cache_write_tokens),
      reasoning: Number(row.reasoning_tokens),
    },
    cost: row.cost,
    metadata: json(row.metadata, "metadata") as SessionRecord["metadata"],
    executorSessionIds: Object.fromEntries(Object.entries(executors).sort(([a], [b]) => (a < b ? -1 : 1))),
    ...(row.origin !== null && {
      origin: json(row.origin, "origin") as NonNullable<SessionRecord["origin"]>,
    }),
  };
}

const sessionById = preparedQuery<{ id: string }, SessionRow>((database, p) =>
  sessionSelect(database).where("s.id", "=", p("id")),
);

/** Reads one session. */
export async function readSession(
  database: SqlDatabase,
  queries: SqlQueries,
  sessionId: string,
): Promise<SessionRecord | undefined> {
  const row = await queries.first<SessionRow>(sessionById.bind(database, { id: sessionId }));
  return row && sessionFromRow(row, database.location);
}

const sessionForWriteById = preparedQuery<{ id: string }, SessionRow & { governed: number | boolean }>(
  (database, p) =>
    sessionSelect(database)
      .select(
        sql<boolean>`EXISTS (SELECT 1 FROM ${database.dialect.table("governor_states")} g WHERE g.session_id = s.id)`.as(
          "governed",
        ),
      )
      .where("s.id", "=", p("id")),
);

/**
 * Reads one session for a write, with whether a governor state is stored for it (so a write without one
 * knows whether there is a row to drop, in the same statement).
 */
export async function readSessionForWrite(
  database: SqlDatabase,
  queries: SqlQueries,
  sessionId: string,
): Promise<{ session: SessionRecord; governed: boolean } | undefined> {
  const row = await queries.first<SessionRow & { governed: number | boolean }>(
    sessionForWriteById.bind(database, { id: sessionId }),
  );
  return row && { session: sessionFromRow(row, database.location), governed: flagOf(row.governed) };
}

/** A `sessions` row's columns as written (those every dialect has). */
export interface SessionValues {
  readonly id: string;
  readonly owner: string | null;
  readonly agent: string | null;
  readonly title: string | null;
  readonly title_words: string;
  readonly created_at: string;
  readonly updated_at: string;
  readonly parent_id: string | null;
  readonly fork_seq: number | null;
  readonly message_count: number;
  readonly turn_count: number;
  readonly next_seq: number;
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly cache_read_tokens: number;
  readonly cache_write_tokens: number;
  readonly reasoning_tokens: number;
  readonly cost: number;
  readonly metadata: string;
  readonly origin: string | null;
}

const insertSessionRow = preparedQuery<SessionValues, never>((database, p) =>
  database.builder.insertInto("sessions").values({
    id: p("id"),
    owner: p("owner"),
    agent: p("agent"),
    title: p("title"),
    title_words: p("title_words"),
    created_at: p("created_at"),
    updated_at: p("updated_at"),
    parent_id: p("parent_id"),
    fork_seq: p("fork_seq"),
    message_count: p("message_count"),
    turn_count: p("turn_count"),
    next_seq: p("next_seq"),
    input_tokens: p("input_tokens"),
    output_tokens: p("output_tokens"),
    cache_read_tokens: p("cache_read_tokens"),
    cache_write_tokens: p("cache_write_tokens"),
    reasoning_tokens: p("reasoning_tokens"),
    cost: p("cost"),
    metadata: p("metadata"),
    origin: p("origin"),
    ...database.dialect.sessionExtras(p("metadata")),
  }),
);

/** Inserts a whole session record (created by a first turn, a fork or a restore). */
export async function insertSession(
  database: SqlTarget,
  queries: SqlQueries,
  record: SessionRecord,
): Promise<void> {
  await queries.run(insertSessionRow.bind(database, sessionValues(record)));
}

/** The columns of a whole session record, as `insertSession` writes them. */
export function sessionValues(record: SessionRecord): SessionValues {
  return {
    ...sessionTotals(record),
    owner: record.owner ?? null,
    agent: record.agent ?? null,
    title: record.title ?? null,
    title_words: normalizeSearchText(record.title ?? ""),
    created_at: record.createdAt,
    parent_id: record.parentId ?? null,
    fork_seq: record.forkSeq ?? null,
    metadata: JSON.stringify(record.metadata),
    origin: record.origin === undefined ? null : JSON.stringify(record.origin),
  };
}

/** The columns a turn changes on its session row (counters, usage, cost, time), in this order. */
export const TOTALS_COLUMNS = [
  "updated_at",
  "message_count",
  "turn_count",
  "next_seq",
  "input_tokens",
  "output_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "reasoning_tokens",
  "cost",
] as const satisfies readonly (keyof SessionValues)[];

/** A session row's id and the values of its `TOTALS_COLUMNS`. */
export type TotalsValues = Pick<SessionValues, "id" | (typeof TOTALS_COLUMNS)[number]>;

/** The `TotalsValues` of a record. */
export function sessionTotals(record: SessionRecord): TotalsValues {
  return {
    id: record.id,
    updated_at: record.updatedAt,
    message_count: record.messageCount,
    turn_count: record.turnCount,
    next_seq: record.nextSeq,
    input_tokens: record.usage.input,
    output_tokens: record.usage.output,
    cache_read_tokens: record.usage.cacheRead,
    cache_write_tokens: record.usage.cacheWrite,
    reasoning_tokens: record.usage.reasoning,
    cost: record.cost,
  };
}

const updateTotals = preparedQuery<TotalsValues, never>(({ builder }, p) =>
  builder
    .updateTable("sessions")
    .set({
      updated_at: p("updated_at"),
      message_count: p("message_count"),
      turn_count: p("turn_count"),
      next_seq: p("next_seq"),
      input_tokens: p("input_tokens"),
      output_tokens: p("output_tokens"),
      cache_read_tokens: p("cache_read_tokens"),
      cache_write_tokens: p("cache_write_tokens"),
      reasoning_tokens: p("reasoning_tokens"),
      cost: p("cost"),
    })
    .where("id", "=", p("id")),
);

/** Writes the counters, usage, cost and time of `record` to its row. */
export async function updateSessionTotals(
  database: SqlTarget,
  queries: SqlQueries,
  record: SessionRecord,
): Promise<void> {
  await queries.run(updateTotals.bind(database, sessionTotals(record)));
}

/** A message row's columns as written. */
export interface MessageColumns {
  readonly session_id: string;
  readonly seq: number;
  readonly position: number;
  readonly turn: number;
  readonly id: string;
  readonly role: string;
  readonly kind: string | null;
  readonly tokens: number | null;
  readonly summarized_by: number | null;
  readonly created_at: string;
  /** The message without its session id, as JSON. */
  readonly body: string;
}

/** The columns of a stored row. */
export function messageColumns(row: StoredRow): MessageColumns {
  const { message } = row;
  const { sessionId: _sessionId, ...body } = message;
  return {
    session_id: message.sessionId,
    seq: message.seq,
    position: row.position,
    turn: message.turn,
    id: message.id,
    role: message.role,
    kind: message.kind ?? null,
    tokens: message.tokens ?? null,
    summarized_by: row.summarizedBy ?? null,
    created_at: message.createdAt,
    body: JSON.stringify(body),
  };
}

/** A `messages` row as selected by `messageSelect`. */
export interface MessageRow {
  readonly session_id: string;
  readonly seq: number;
  readonly position: number;
  readonly summarized_by: number | null;
  readonly body: string;
}

/** Selects message rows (alias `m`). */
export function messageSelect({ builder, dialect }: SqlTarget) {
  return builder
    .selectFrom("messages as m")
    .select([
      "m.session_id",
      "m.seq",
      "m.position",
      "m.summarized_by",
      dialect.jsonText("m.body").as("body"),
    ]);
}

/** The message of a row. A body whose JSON was damaged on disk raises `DamagedMessageError`. */
export function messageFromRow(row: MessageRow, location: string): Message {
  return messageOfBody(row.session_id, row.seq, row.body, location);
}

/** A message row as a session's load selects it (`bodySelect`), read as a tuple: its seq and body. */
export type BodyRow = readonly [seq: number, body: string];

/** Selects message rows (alias `m`) as `BodyRow`s (seq, then body): what a load needs, nothing more per row. */
export function bodySelect({ builder, dialect }: SqlTarget) {
  return builder.selectFrom("messages as m").select(["m.seq", dialect.jsonText("m.body").as("body")]);
}

/**
 * The message of session `sessionId` stored as `row`. A body whose JSON was damaged on disk raises
 * `DamagedMessageError`. The parsed body is fresh, so it gets its session id in place (no copy).
 */
export function messageOfBody(sessionId: string, seq: number, text: string, location: string): Message {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new DamagedMessageError(location, sessionId, seq, { cause: error });
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new DamagedMessageError(location, sessionId, seq);
  }
  (body as { sessionId: string }).sessionId = sessionId;
  return body as Message;
}

/** The stored row of a `messages` row. */
export function storedRowFromRow(row: MessageRow, location: string): StoredRow {
  return {
    message: messageFromRow(row, location),
    position: row.position,
    ...(row.summarized_by !== null && { summarizedBy: row.summarized_by }),
  };
}

interface BlobValues {
  readonly ref: string;
  readonly media_type: string;
  readonly is_text: number | boolean;
  readonly size: number;
  readonly content: Uint8Array;
}

const insertBlobRow = preparedQuery<BlobValues, never>(({ builder }, p) =>
  builder
    .insertInto("blobs")
    .values({
      ref: p("ref"),
      media_type: p("media_type"),
      is_text: p("is_text"),
      size: p("size"),
      content: p("content"),
    })
    .onConflict((conflict) => conflict.column("ref").doNothing()),
);

const insertBlobLink = preparedQuery<{ session_id: string; ref: string }, never>(({ builder }, p) =>
  builder
    .insertInto("blob_links")
    .values({ session_id: p("session_id"), ref: p("ref") })
    .onConflict((conflict) => conflict.doNothing()),
);

/** Stores blobs (once each) and links them to a session. */
export async function insertBlobs(
  database: SqlTarget,
  queries: SqlQueries,
  sessionId: string,
  blobs: readonly BlobData[],
): Promise<void> {
  for (const blob of blobs) {
    await queries.run(
      insertBlobRow.bind(database, {
        ref: blob.ref,
        media_type: blob.mediaType,
        is_text: database.dialect.flag(blob.isText),
        size: blob.bytes.length,
        content: database.dialect.bytes(blob.bytes),
      }),
    );
    await queries.run(insertBlobLink.bind(database, { session_id: sessionId, ref: blob.ref }));
  }
}

const deleteUnlinkedBlob = preparedQuery<{ ref: string }, never>(({ builder }, p) =>
  builder
    .deleteFrom("blobs as b")
    .where("b.ref", "=", p("ref"))
    .where((eb) =>
      eb.not(eb.exists(eb.selectFrom("blob_links as l").select("l.ref").whereRef("l.ref", "=", "b.ref"))),
    ),
);

/**
 * Deletes the given blobs when no session links them. A blob another transaction is linking right now
 * (PostgreSQL) is kept: its link's foreign key makes the delete fail, which is rolled back per blob.
 */
export async function collectBlobs(
  database: SqlTarget,
  queries: SqlQueries,
  refs: readonly string[],
): Promise<number> {
  let removed = 0;
  for (const ref of refs) {
    await queries.run(sql`SAVEPOINT collect_blob`);
    try {
      removed += await queries.run(deleteUnlinkedBlob.bind(database, { ref }));
      await queries.run(sql`RELEASE SAVEPOINT collect_blob`);
    } catch {
      await queries.run(sql`ROLLBACK TO SAVEPOINT collect_blob`);
    }
  }
  return removed;
}

/** Bytes read from a blob column (a `Buffer` from `pg`, a `Uint8Array` from `node:sqlite`) as a plain view. */
export function bytesOf(value: Uint8Array): Uint8Array {
  return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
}

/** A flag read back (SQLite 0/1, PostgreSQL boolean). */
export function flagOf(value: number | boolean): boolean {
  return value === true || value === 1;
}
