/** Reading and writing session, message and blob rows of the SQLite schema. */
import { CorruptStoreError, DamagedMessageError } from "../../errors/index.ts";
import type { Message } from "../../model/message.ts";
import { normalizeSearchText, searchTextOf } from "../search-text.ts";
import type { BlobData, SessionRecord, StoredRow } from "../session-store.ts";
import type { SqliteDatabase } from "./sqlite-database.ts";

/** A `sessions` row with its executor ids, as `SESSION_SELECT` returns it. */
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
  readonly input_tokens: number;
  readonly output_tokens: number;
  readonly cache_read_tokens: number;
  readonly cache_write_tokens: number;
  readonly reasoning_tokens: number;
  readonly cost: number;
  readonly metadata: string;
  readonly origin: string | null;
  readonly executors: string | null;
}

/** Selects sessions (alias `s`) with their executor session ids. */
export const SESSION_SELECT = `SELECT s.*, (SELECT json_group_object(x.agent, x.executor_session_id) FROM sync_states x
  WHERE x.session_id = s.id AND x.executor_session_id IS NOT NULL) AS executors FROM sessions s`;

/** Parses JSON read from the file; a damaged value raises `CorruptStoreError` naming what it belongs to. */
function parseStored(text: string, location: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CorruptStoreError(location, `${what} is damaged (its stored JSON cannot be read)`, {
      cause: error,
    });
  }
}

/** The record of a `sessions` row. */
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
      input: row.input_tokens,
      output: row.output_tokens,
      cacheRead: row.cache_read_tokens,
      cacheWrite: row.cache_write_tokens,
      reasoning: row.reasoning_tokens,
    },
    cost: row.cost,
    metadata: json(row.metadata, "metadata") as SessionRecord["metadata"],
    executorSessionIds: Object.fromEntries(Object.entries(executors).sort(([a], [b]) => (a < b ? -1 : 1))),
    ...(row.origin !== null && {
      origin: json(row.origin, "origin") as NonNullable<SessionRecord["origin"]>,
    }),
  };
}

/** Reads one session. */
export function readSession(database: SqliteDatabase, sessionId: string): SessionRecord | undefined {
  const row = database.get<SessionRow>(`${SESSION_SELECT} WHERE s.id = ?`, sessionId);
  return row && sessionFromRow(row, database.location);
}

/** Inserts a whole session record (created by a first turn, a fork or a restore). */
export function insertSession(database: SqliteDatabase, record: SessionRecord): void {
  database.run(
    `INSERT INTO sessions (id, owner, agent, title, title_words, created_at, updated_at, parent_id, fork_seq,
      message_count, turn_count, next_seq, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
      reasoning_tokens, cost, metadata, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    record.id,
    record.owner ?? null,
    record.agent ?? null,
    record.title ?? null,
    normalizeSearchText(record.title ?? ""),
    record.createdAt,
    record.updatedAt,
    record.parentId ?? null,
    record.forkSeq ?? null,
    record.messageCount,
    record.turnCount,
    record.nextSeq,
    record.usage.input,
    record.usage.output,
    record.usage.cacheRead,
    record.usage.cacheWrite,
    record.usage.reasoning,
    record.cost,
    JSON.stringify(record.metadata),
    record.origin === undefined ? null : JSON.stringify(record.origin),
  );
}

/** Writes the counters, usage, cost and time of `record` to its row. */
export function updateSessionTotals(database: SqliteDatabase, record: SessionRecord): void {
  database.run(
    `UPDATE sessions SET updated_at = ?, message_count = ?, turn_count = ?, next_seq = ?, input_tokens = ?,
      output_tokens = ?, cache_read_tokens = ?, cache_write_tokens = ?, reasoning_tokens = ?, cost = ? WHERE id = ?`,
    record.updatedAt,
    record.messageCount,
    record.turnCount,
    record.nextSeq,
    record.usage.input,
    record.usage.output,
    record.usage.cacheRead,
    record.usage.cacheWrite,
    record.usage.reasoning,
    record.cost,
    record.id,
  );
}

/** Inserts a message row and its search words. */
export function insertRow(database: SqliteDatabase, row: StoredRow): void {
  const { message } = row;
  const { sessionId: _sessionId, ...body } = message;
  const rowId = database.get<{ row_id: number }>(
    `INSERT INTO messages (session_id, seq, position, turn, id, role, kind, tokens, summarized_by, created_at, body)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING row_id`,
    message.sessionId,
    message.seq,
    row.position,
    message.turn,
    message.id,
    message.role,
    message.kind ?? null,
    message.tokens ?? null,
    row.summarizedBy ?? null,
    message.createdAt,
    JSON.stringify(body),
  )!.row_id;
  const words = searchTextOf(message);
  if (words !== "") database.run("INSERT INTO message_words (rowid, words) VALUES (?, ?)", rowId, words);
}

/** A `messages` row as selected by `MESSAGE_SELECT`. */
export interface MessageRow {
  readonly session_id: string;
  readonly seq: number;
  readonly position: number;
  readonly summarized_by: number | null;
  readonly body: string;
}

/** Selects message rows (alias `m`). */
export const MESSAGE_SELECT =
  "SELECT m.session_id, m.seq, m.position, m.summarized_by, m.body FROM messages m";

/** The message of a row. A body whose JSON was damaged on disk raises `DamagedMessageError`. */
export function messageFromRow(row: MessageRow, location: string): Message {
  let body: unknown;
  try {
    body = JSON.parse(row.body);
  } catch (error) {
    throw new DamagedMessageError(location, row.session_id, row.seq, { cause: error });
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new DamagedMessageError(location, row.session_id, row.seq);
  }
  return { ...(body as Omit<Message, "sessionId">), sessionId: row.session_id };
}

/** The stored row of a `messages` row. */
export function storedRowFromRow(row: MessageRow, location: string): StoredRow {
  return {
    message: messageFromRow(row, location),
    position: row.position,
    ...(row.summarized_by !== null && { summarizedBy: row.summarized_by }),
  };
}

/** Stores a blob (once) and links it to a session. */
export function insertBlob(database: SqliteDatabase, sessionId: string, blob: BlobData): void {
  database.run(
    "INSERT INTO blobs (ref, media_type, is_text, size, content) VALUES (?, ?, ?, ?, ?) ON CONFLICT (ref) DO NOTHING",
    blob.ref,
    blob.mediaType,
    blob.isText ? 1 : 0,
    blob.bytes.length,
    blob.bytes,
  );
  database.run(
    "INSERT INTO blob_links (session_id, ref) VALUES (?, ?) ON CONFLICT DO NOTHING",
    sessionId,
    blob.ref,
  );
}

/** Deletes the given blobs that no session links any more; returns how many. */
export function collectBlobs(database: SqliteDatabase, refs: readonly string[]): number {
  let removed = 0;
  for (const ref of refs) {
    removed += database.run(
      "DELETE FROM blobs WHERE ref = ? AND NOT EXISTS (SELECT 1 FROM blob_links l WHERE l.ref = ?)",
      ref,
      ref,
    );
  }
  return removed;
}
