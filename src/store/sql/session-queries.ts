/** List, search and latest-session queries of a ctxkit SQL database. */
import { sql, type RawBuilder, type SqlBool } from "kysely";
import type { ListQuery } from "../list-query.ts";
import { searchHit } from "../search-options.ts";
import type { SearchHit, SessionFilter, SessionRecord } from "../session-store.ts";
import {
  messageFromRow,
  messageSelect,
  readSession,
  sessionFromRow,
  sessionSelect,
  type MessageRow,
  type SessionRow,
} from "./session-rows.ts";
import type { SqlDatabase, SqlQueries, SqlTarget } from "./sql-database.ts";

/** Conditions (on alias `s`) for a session filter. */
function filterConditions({ dialect }: SqlTarget, filter: SessionFilter): RawBuilder<SqlBool>[] {
  const conditions: RawBuilder<SqlBool>[] = [];
  if (filter.owner !== undefined) {
    conditions.push(
      filter.includeUnowned === true
        ? sql<SqlBool>`(s.owner = ${filter.owner} OR s.owner IS NULL)`
        : sql<SqlBool>`s.owner = ${filter.owner}`,
    );
  }
  if (filter.agent !== undefined) conditions.push(sql<SqlBool>`s.agent = ${filter.agent}`);
  if (filter.metadata !== undefined) conditions.push(...dialect.metadataConditions(filter.metadata));
  return conditions;
}

const all = (conditions: readonly RawBuilder<SqlBool>[]) => sql<SqlBool>`${sql.join(conditions, sql` AND `)}`;

/** Sessions matching the conditions, newest first. */
function newestSessions(database: SqlTarget, conditions: readonly RawBuilder<SqlBool>[], limit: number) {
  const query = sessionSelect(database);
  return (conditions.length === 0 ? query : query.where(all(conditions)))
    .orderBy("s.updated_at", "desc")
    .orderBy("s.id", "desc")
    .limit(limit);
}

/** One page of sessions, newest first (fetching one extra row to know whether more follow). */
export async function listSessionRows(
  database: SqlDatabase,
  queries: SqlQueries,
  query: ListQuery,
): Promise<SessionRecord[]> {
  const conditions = filterConditions(database, query.filter);
  if (query.after) {
    const { updatedAt, id } = query.after;
    conditions.push(
      sql<SqlBool>`(s.updated_at < ${updatedAt} OR (s.updated_at = ${updatedAt} AND s.id < ${id}))`,
    );
  }
  const rows = await queries.all<SessionRow>(newestSessions(database, conditions, query.limit + 1));
  return rows.map((row) => sessionFromRow(row, database.location));
}

/** The newest session matching a filter. */
export async function latestSessionRow(
  database: SqlDatabase,
  queries: SqlQueries,
  filter: SessionFilter,
): Promise<SessionRecord | undefined> {
  const row = await queries.first<SessionRow>(
    newestSessions(database, filterConditions(database, filter), 1),
  );
  return row && sessionFromRow(row, database.location);
}

/**
 * Sessions whose title or some message holds every term, newest first, each with its first matching message.
 * Message words are matched by the dialect's text index (FTS5, or a `tsvector`) over ctxkit's own normalised
 * words; titles by their normalised words.
 */
export async function searchSessionRows(
  database: SqlDatabase,
  queries: SqlQueries,
  terms: readonly string[],
  filter: SessionFilter,
  limit: number,
): Promise<SearchHit[]> {
  const { dialect } = database;
  const titleMatch = terms.map((term) => sql<SqlBool>`(' ' || s.title_words || ' ') LIKE ${`% ${term} %`}`);
  const where = [
    sql<SqlBool>`(h.seq IS NOT NULL OR (${all(titleMatch)}))`,
    ...filterConditions(database, filter),
  ];
  const rows = await queries.all<{ id: string; seq: number | null }>(
    sql`WITH h AS (${await dialect.messageHits(database, queries, terms)})
      SELECT s.id, h.seq FROM ${dialect.table("sessions")} s LEFT JOIN h ON h.session_id = s.id
      WHERE ${all(where)} ORDER BY s.updated_at DESC, s.id DESC LIMIT ${limit}`,
  );
  const hits: SearchHit[] = [];
  for (const row of rows) {
    const session = (await readSession(database, queries, row.id))!;
    const message =
      row.seq === null
        ? undefined
        : messageFromRow(
            (await queries.first<MessageRow>(
              messageSelect(database).where("m.session_id", "=", row.id).where("m.seq", "=", row.seq),
            ))!,
            database.location,
          );
    hits.push(searchHit(session, message, terms));
  }
  return hits;
}
