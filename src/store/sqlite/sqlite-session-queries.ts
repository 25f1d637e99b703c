/** List, search and latest-session queries on the SQLite schema. */
import type { SQLInputValue } from "node:sqlite";
import type { ListQuery } from "../list-query.ts";
import { searchHit } from "../search-options.ts";
import type { SearchHit, SessionFilter, SessionRecord } from "../session-store.ts";
import type { SqliteDatabase } from "./sqlite-database.ts";
import {
  MESSAGE_SELECT,
  messageFromRow,
  readSession,
  SESSION_SELECT,
  sessionFromRow,
  type MessageRow,
  type SessionRow,
} from "./sqlite-rows.ts";

interface Clause {
  readonly where: string[];
  readonly parameters: SQLInputValue[];
}

/** SQL conditions (on alias `s`) for a session filter. */
export function filterClause(filter: SessionFilter): Clause {
  const where: string[] = [];
  const parameters: SQLInputValue[] = [];
  const add = (condition: string, ...values: SQLInputValue[]) => {
    where.push(condition);
    parameters.push(...values);
  };
  if (filter.owner !== undefined) {
    add(filter.includeUnowned === true ? "(s.owner = ? OR s.owner IS NULL)" : "s.owner = ?", filter.owner);
  }
  if (filter.agent !== undefined) add("s.agent = ?", filter.agent);
  for (const [key, value] of Object.entries(filter.metadata ?? {})) {
    const exists = "EXISTS (SELECT 1 FROM json_each(s.metadata) j WHERE j.key = ? AND";
    if (value === null) add(`${exists} j.type = 'null')`, key);
    else if (typeof value === "boolean") add(`${exists} j.type = '${value}')`, key);
    else if (typeof value === "number")
      add(`${exists} j.type IN ('integer', 'real') AND j.value = ?)`, key, value);
    else add(`${exists} j.type = 'text' AND j.value = ?)`, key, value);
  }
  return { where, parameters };
}

const whereOf = (conditions: readonly string[]) =>
  conditions.length === 0 ? "" : ` WHERE ${conditions.join(" AND ")}`;

/** One page of sessions, newest first (fetching one extra row to know whether more follow). */
export function listSessionRows(database: SqliteDatabase, query: ListQuery): SessionRecord[] {
  const { where, parameters } = filterClause(query.filter);
  if (query.after) {
    where.push("(s.updated_at < ? OR (s.updated_at = ? AND s.id < ?))");
    parameters.push(query.after.updatedAt, query.after.updatedAt, query.after.id);
  }
  const sql = `${SESSION_SELECT}${whereOf(where)} ORDER BY s.updated_at DESC, s.id DESC LIMIT ?`;
  return database
    .all<SessionRow>(sql, ...parameters, query.limit + 1)
    .map((row) => sessionFromRow(row, database.location));
}

/**
 * Sessions whose title or some message holds every term, newest first, each with its first matching message.
 * Message words are matched with FTS5 (the `ascii` tokenizer over ctxkit's own normalised words).
 */
export function searchSessionRows(
  database: SqliteDatabase,
  terms: readonly string[],
  filter: SessionFilter,
  limit: number,
): SearchHit[] {
  const { where, parameters } = filterClause(filter);
  const titleMatch = terms.map(() => "(' ' || s.title_words || ' ') LIKE ?").join(" AND ");
  where.unshift(`(h.seq IS NOT NULL OR (${titleMatch}))`);
  const sql = `WITH h AS (SELECT m.session_id, min(m.seq) AS seq FROM message_words w
      JOIN messages m ON m.row_id = w.rowid WHERE message_words MATCH ? GROUP BY m.session_id)
    SELECT s.id, h.seq FROM sessions s LEFT JOIN h ON h.session_id = s.id${whereOf(where)}
    ORDER BY s.updated_at DESC, s.id DESC LIMIT ?`;
  const match = terms.map((term) => `"${term}"`).join(" ");
  const rows = database.all<{ id: string; seq: number | null }>(
    sql,
    match,
    ...terms.map((term) => `% ${term} %`),
    ...parameters,
    limit,
  );
  return rows.map((row) => {
    const session = readSession(database, row.id)!;
    const message =
      row.seq === null
        ? undefined
        : messageFromRow(
            database.get<MessageRow>(
              `${MESSAGE_SELECT} WHERE m.session_id = ? AND m.seq = ?`,
              row.id,
              row.seq,
            )!,
            database.location,
          );
    return searchHit(session, message, terms);
  });
}

/** The newest session matching a filter. */
export function latestSessionRow(database: SqliteDatabase, filter: SessionFilter): SessionRecord | undefined {
  const { where, parameters } = filterClause(filter);
  const row = database.get<SessionRow>(
    `${SESSION_SELECT}${whereOf(where)} ORDER BY s.updated_at DESC, s.id DESC LIMIT 1`,
    ...parameters,
  );
  return row && sessionFromRow(row, database.location);
}
