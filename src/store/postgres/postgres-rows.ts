/** Reading and writing session, message and blob rows of the PostgreSQL schema. */
import type { Message } from "../../model/message.ts";
import { normalizeSearchText, searchTextOf } from "../search-text.ts";
import type { BlobData, SessionRecord, StoredRow } from "../session-store.ts";
import type { PostgresQueries } from "./postgres-database.ts";

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
  readonly input_tokens: string | number;
  readonly output_tokens: string | number;
  readonly cache_read_tokens: string | number;
  readonly cache_write_tokens: string | number;
  readonly reasoning_tokens: string | number;
  readonly cost: number;
  /** jsonb copy for filters (keys reordered). */
  readonly metadata: SessionRecord["metadata"];
  /** The metadata as written. */
  readonly metadata_json: SessionRecord["metadata"];
  readonly origin: SessionRecord["origin"] | null;
  readonly executors: Record<string, string> | null;
}

/** Selects sessions (alias `s`) with their executor session ids. */
export const SESSION_SELECT = `SELECT s.*, (SELECT json_object_agg(x.agent, x.executor_session_id ORDER BY x.agent)
  FROM {sync_states} x WHERE x.session_id = s.id AND x.executor_session_id IS NOT NULL) AS executors FROM {sessions} s`;

/** The record of a `sessions` row (bigint totals arrive as strings). */
export function sessionFromRow(row: SessionRow): SessionRecord {
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
    metadata: row.metadata_json,
    executorSessionIds: row.executors ?? {},
    ...(row.origin !== null && { origin: row.origin }),
  };
}

/** Reads one session (`lock` takes its row lock for the rest of the transaction). */
export async function readSession(
  queries: PostgresQueries,
  sessionId: string,
  lock = false,
): Promise<SessionRecord | undefined> {
  const row = await queries.row<SessionRow>(
    `${SESSION_SELECT} WHERE s.id = $1${lock ? " FOR UPDATE OF s" : ""}`,
    [sessionId],
  );
  return row && sessionFromRow(row);
}

const SESSION_COLUMNS = `id, owner, agent, title, title_words, created_at, updated_at, parent_id, fork_seq, message_count,
  turn_count, next_seq, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, cost,
  metadata, origin, metadata_json`;

/** Inserts a whole session record (created by a first turn, a fork or a restore). */
export async function insertSession(queries: PostgresQueries, record: SessionRecord): Promise<void> {
  await queries.run(
    `INSERT INTO {sessions} (${SESSION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
      $15, $16, $17, $18, $19, $20, $21)`,
    [
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
      JSON.stringify(record.metadata),
    ],
  );
}

/** Writes the counters, usage, cost and time of `record` to its row. */
export async function updateSessionTotals(queries: PostgresQueries, record: SessionRecord): Promise<void> {
  await queries.run(
    `UPDATE {sessions} SET updated_at = $1, message_count = $2, turn_count = $3, next_seq = $4, input_tokens = $5,
      output_tokens = $6, cache_read_tokens = $7, cache_write_tokens = $8, reasoning_tokens = $9, cost = $10 WHERE id = $11`,
    [
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
    ],
  );
}

const ROWS_PER_STATEMENT = 1000;

/** Inserts message rows with their search words, a thousand per statement. */
export async function insertRows(queries: PostgresQueries, rows: readonly StoredRow[]): Promise<void> {
  for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
    const chunk = rows.slice(start, start + ROWS_PER_STATEMENT);
    const column = <T>(pick: (row: StoredRow) => T) => chunk.map(pick);
    await queries.run(
      `INSERT INTO {messages} (session_id, seq, position, turn, id, role, kind, tokens, summarized_by, created_at, body, words)
        SELECT session_id, seq, position, turn, id, role, kind, tokens, summarized_by, created_at, body,
          array_to_tsvector(string_to_array(words, ' '))
        FROM unnest($1::text[], $2::int[], $3::int[], $4::int[], $5::text[], $6::text[], $7::text[], $8::int[], $9::int[],
          $10::text[], $11::json[], $12::text[])
          AS t (session_id, seq, position, turn, id, role, kind, tokens, summarized_by, created_at, body, words)`,
      [
        column((row) => row.message.sessionId),
        column((row) => row.message.seq),
        column((row) => row.position),
        column((row) => row.message.turn),
        column((row) => row.message.id),
        column((row) => row.message.role),
        column((row) => row.message.kind ?? null),
        column((row) => row.message.tokens ?? null),
        column((row) => row.summarizedBy ?? null),
        column((row) => row.message.createdAt),
        column((row) => {
          const { sessionId: _sessionId, ...body } = row.message;
          return JSON.stringify(body);
        }),
        column((row) => searchTextOf(row.message)),
      ],
    );
  }
}

/** A `messages` row as selected by `MESSAGE_SELECT`. */
export interface MessageRow {
  readonly session_id: string;
  readonly position: number;
  readonly summarized_by: number | null;
  readonly body: Omit<Message, "sessionId">;
}

/** Selects message rows (alias `m`). */
export const MESSAGE_SELECT = "SELECT m.session_id, m.position, m.summarized_by, m.body FROM {messages} m";

/** The message of a row. */
export function messageFromRow(row: MessageRow): Message {
  return { ...row.body, sessionId: row.session_id };
}

/** The stored row of a `messages` row. */
export function storedRowFromRow(row: MessageRow): StoredRow {
  return {
    message: messageFromRow(row),
    position: row.position,
    ...(row.summarized_by !== null && { summarizedBy: row.summarized_by }),
  };
}

/** Stores blobs (once each) and links them to a session. */
export async function insertBlobs(
  queries: PostgresQueries,
  sessionId: string,
  blobs: readonly BlobData[],
): Promise<void> {
  for (const blob of blobs) {
    await queries.run(
      `INSERT INTO {blobs} (ref, media_type, is_text, size, content) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (ref) DO NOTHING`,
      [
        blob.ref,
        blob.mediaType,
        blob.isText,
        blob.bytes.length,
        Buffer.from(blob.bytes.buffer, blob.bytes.byteOffset, blob.bytes.byteLength),
      ],
    );
    await queries.run("INSERT INTO {blob_links} (session_id, ref) VALUES ($1, $2) ON CONFLICT DO NOTHING", [
      sessionId,
      blob.ref,
    ]);
  }
}

/**
 * Deletes the given blobs when no session links them. A blob another transaction is linking right now is
 * kept (its link's foreign key makes the delete fail, which is caught per blob).
 */
export async function collectBlobs(queries: PostgresQueries, refs: readonly string[]): Promise<number> {
  let removed = 0;
  for (const ref of refs) {
    await queries.run("SAVEPOINT collect_blob");
    try {
      removed += await queries.run(
        "DELETE FROM {blobs} b WHERE b.ref = $1 AND NOT EXISTS (SELECT 1 FROM {blob_links} l WHERE l.ref = b.ref)",
        [ref],
      );
      await queries.run("RELEASE SAVEPOINT collect_blob");
    } catch {
      await queries.run("ROLLBACK TO SAVEPOINT collect_blob");
    }
  }
  return removed;
}
