/**
 * The search words of SQLite message rows, indexed after the turns that wrote them (../sql/words-drain.ts), a
 * batch per transaction rather than one FTS5 insert per row: an FTS5 insert costs little by itself, but every
 * transaction that makes one writes a new index segment (and merges them now and then). Appends only insert
 * rows; `message_words_state.indexed_to` marks how far `message_words` goes (every row up to it is indexed, none
 * after it): the rows after it are the durable queue, committed with their turns. Search matches the waiting
 * rows itself (`pendingMatches`), so results are the same as if every row were indexed at once. Deleting a
 * session's rows keeps the mark at or below the newest remaining row, so row ids SQLite hands out again are
 * always above it.
 */
import { CompiledQuery, sql } from "kysely";
import { matchingRows, queuedWords, type QueuedRow } from "../sql/queued-words.ts";
import type { RecentBodies } from "../sql/recent-bodies.ts";
import type { SqlQueries } from "../sql/sql-database.ts";

async function addWords(queries: SqlQueries, rowId: number, words: string): Promise<void> {
  if (words === "") return;
  await queries.run(
    CompiledQuery.raw("INSERT INTO message_words (rowid, words) VALUES (?, ?)", [rowId, words]),
  );
}

/**
 * Indexes the words of the first `limit` waiting rows (in row id order) and moves the mark past them, inside the
 * caller's write transaction; returns how many rows it indexed (0 when none waits).
 */
export async function indexWaitingWords(
  queries: SqlQueries,
  limit: number,
  recent?: RecentBodies,
): Promise<number> {
  const rows = await queries.all<QueuedRow & { row_id: number }>(
    CompiledQuery.raw(
      "SELECT row_id, session_id, seq, body FROM messages WHERE row_id > (SELECT indexed_to FROM message_words_state) ORDER BY row_id LIMIT ?",
      [limit],
    ),
  );
  if (rows.length === 0) return 0;
  for (const row of rows) await addWords(queries, row.row_id, queuedWords(recent, row));
  await queries.run(
    CompiledQuery.raw("UPDATE message_words_state SET indexed_to = ?", [rows.at(-1)!.row_id]),
  );
  return rows.length;
}

/**
 * Drops the words of a session's indexed rows, before the rows go; keeps the mark at or below the newest row
 * that stays, so the ids SQLite will hand out again lie above it.
 */
export async function deleteSessionWords(queries: SqlQueries, sessionId: string): Promise<void> {
  await queries.run(
    sql`DELETE FROM message_words WHERE rowid IN (SELECT row_id FROM messages WHERE session_id = ${sessionId}
      AND row_id <= (SELECT indexed_to FROM message_words_state))`,
  );
  await queries.run(
    sql`UPDATE message_words_state SET indexed_to = min(indexed_to, coalesce((SELECT row_id FROM messages
      WHERE session_id <> ${sessionId} ORDER BY row_id DESC LIMIT 1), 0))`,
  );
}

/**
 * Drops the words of one indexed row, before the row goes; keeps the mark at or below the newest row that stays
 * (SQLite hands the id of a removed newest row out again).
 */
export async function deleteRowWords(queries: SqlQueries, sessionId: string, seq: number): Promise<void> {
  await queries.run(
    sql`DELETE FROM message_words WHERE rowid IN (SELECT row_id FROM messages WHERE session_id = ${sessionId}
      AND seq = ${seq} AND row_id <= (SELECT indexed_to FROM message_words_state))`,
  );
  await queries.run(
    sql`UPDATE message_words_state SET indexed_to = min(indexed_to, coalesce((SELECT row_id FROM messages
      WHERE NOT (session_id = ${sessionId} AND seq = ${seq}) ORDER BY row_id DESC LIMIT 1), 0))`,
  );
}

/**
 * The ids of the waiting (not yet indexed) rows that hold every term, as JSON for `json_each`. A file from
 * before batched indexing (opened read-only, so not migrated) has every row indexed.
 */
export async function pendingMatches(queries: SqlQueries, terms: readonly string[]): Promise<string> {
  const present = await queries.first(
    CompiledQuery.raw(
      "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'message_words_state'",
      [],
    ),
  );
  if (present === undefined) return "[]";
  const rows = await queries.all<{ row_id: number; body: string }>(
    CompiledQuery.raw(
      "SELECT row_id, body FROM messages WHERE row_id > (SELECT indexed_to FROM message_words_state)",
      [],
    ),
  );
  const matches = matchingRows(rows, terms).map((row) => row.row_id);
  return JSON.stringify(matches);
}
