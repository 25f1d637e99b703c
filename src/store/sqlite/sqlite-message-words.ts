/**
 * The search words of SQLite message rows, indexed in batches rather than by one FTS5 insert per row. An FTS5
 * insert costs little by itself, but every transaction that makes one writes a new index segment (and merges
 * them now and then): for one turn per transaction that doubled the pages each append wrote. So appends only
 * insert rows; `message_words_state.indexed_to` marks how far `message_words` goes (every row up to it is
 * indexed, none after it), and once `WORDS_BACKLOG` rows wait, the write that took the backlog there indexes
 * them all in its own transaction. Search matches the waiting rows itself (`pendingMatches`), so results are
 * the same as if every row were indexed at once. Deleting a session's rows keeps the mark at or below the
 * newest remaining row, so row ids SQLite hands out again are always above it.
 */
import { CompiledQuery, sql } from "kysely";
import type { Message } from "../../model/message.ts";
import { searchTextOf } from "../search-text.ts";
import type { SqlQueries } from "../sql/sql-database.ts";

/** Rows left waiting before a write indexes them (search reads at most this many rows itself). */
export const WORDS_BACKLOG = 256;

const readMark = CompiledQuery.raw(
  "SELECT indexed_to, (SELECT max(row_id) FROM messages) AS last FROM message_words_state",
  [],
);

/** A row just inserted: its id and its message. */
export interface InsertedRow {
  readonly rowId: number;
  readonly message: Pick<Message, "content">;
}

/** The words of a stored body ("" for a body that cannot be read: it matches nothing, as a damaged row). */
function wordsOfBody(body: string): string {
  try {
    const message = JSON.parse(body) as Pick<Message, "content">;
    return Array.isArray(message.content) ? searchTextOf(message) : "";
  } catch {
    return "";
  }
}

async function addWords(queries: SqlQueries, rowId: number, words: string): Promise<void> {
  if (words === "") return;
  await queries.run(
    CompiledQuery.raw("INSERT INTO message_words (rowid, words) VALUES (?, ?)", [rowId, words]),
  );
}

/**
 * After rows were inserted (`inserted`, in row id order: the newest rows of the table), indexes every waiting
 * row once `WORDS_BACKLOG` or more wait, or `now` asks for it (bulk writes). Inside the caller's transaction.
 */
export async function indexWaitingWords(
  queries: SqlQueries,
  inserted: readonly InsertedRow[],
  now = false,
): Promise<void> {
  const mark = await queries.first<{ indexed_to: number; last: number | null }>(readMark);
  if (mark === undefined) return;
  const last = mark.last ?? 0;
  if (last <= mark.indexed_to || (!now && last - mark.indexed_to < WORDS_BACKLOG)) return;
  // Row ids are handed out above the largest: the rows just inserted are the last ones, older waiting rows
  // lie between the mark and them.
  const first = inserted[0]?.rowId ?? last + 1;
  const older = await queries.all<{ row_id: number; body: string }>(
    CompiledQuery.raw("SELECT row_id, body FROM messages WHERE row_id > ? AND row_id < ? ORDER BY row_id", [
      mark.indexed_to,
      first,
    ]),
  );
  for (const row of older) await addWords(queries, row.row_id, wordsOfBody(row.body));
  for (const row of inserted) await addWords(queries, row.rowId, searchTextOf(row.message));
  await queries.run(CompiledQuery.raw("UPDATE message_words_state SET indexed_to = ?", [last]));
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
  const matches: number[] = [];
  for (const row of rows) {
    const words = new Set(wordsOfBody(row.body).split(" "));
    if (terms.every((term) => words.has(term))) matches.push(row.row_id);
  }
  return JSON.stringify(matches);
}
