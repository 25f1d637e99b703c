/** List, search and latest-session queries on the PostgreSQL schema. */
import type { ListQuery } from "../list-query.ts";
import { searchHit } from "../search-options.ts";
import type { SearchHit, SessionFilter, SessionRecord } from "../session-store.ts";
import type { PostgresQueries } from "./postgres-database.ts";
import {
  MESSAGE_SELECT,
  messageFromRow,
  readSession,
  SESSION_SELECT,
  sessionFromRow,
  type MessageRow,
  type SessionRow,
} from "./postgres-rows.ts";

interface Clause {
  readonly where: string[];
  readonly parameters: unknown[];
}

/** SQL conditions (on alias `s`) for a session filter; placeholders are numbered after `offset` parameters. */
function filterClause(filter: SessionFilter, offset = 0): Clause {
  const where: string[] = [];
  const parameters: unknown[] = [];
  const add = (condition: (placeholder: string) => string, value: unknown) => {
    parameters.push(value);
    where.push(condition(`$${offset + parameters.length}`));
  };
  if (filter.owner !== undefined) {
    add(
      (p) => (filter.includeUnowned === true ? `(s.owner = ${p} OR s.owner IS NULL)` : `s.owner = ${p}`),
      filter.owner,
    );
  }
  if (filter.agent !== undefined) add((p) => `s.agent = ${p}`, filter.agent);
  if (filter.metadata !== undefined && Object.keys(filter.metadata).length > 0) {
    add((p) => `s.metadata @> ${p}::jsonb`, JSON.stringify(filter.metadata));
  }
  return { where, parameters };
}

const whereOf = (conditions: readonly string[]) =>
  conditions.length === 0 ? "" : ` WHERE ${conditions.join(" AND ")}`;

/** One page of sessions, newest first (fetching one extra row to know whether more follow). */
export async function listSessionRows(queries: PostgresQueries, query: ListQuery): Promise<SessionRecord[]> {
  const { where, parameters } = filterClause(query.filter);
  if (query.after) {
    parameters.push(query.after.updatedAt, query.after.id);
    const [at, id] = [`$${parameters.length - 1}`, `$${parameters.length}`];
    where.push(`(s.updated_at < ${at} OR (s.updated_at = ${at} AND s.id < ${id}))`);
  }
  parameters.push(query.limit + 1);
  const sql = `${SESSION_SELECT}${whereOf(where)} ORDER BY s.updated_at DESC, s.id DESC LIMIT $${parameters.length}`;
  return (await queries.rows<SessionRow>(sql, parameters)).map(sessionFromRow);
}

/**
 * Sessions whose title or some message holds every term, newest first, each with its first matching message.
 * Message words are a `tsvector` built from ctxkit's own normalised words (`array_to_tsvector`), queried
 * with quoted lexemes, so no text-search configuration changes them.
 */
export async function searchSessionRows(
  queries: PostgresQueries,
  terms: readonly string[],
  filter: SessionFilter,
  limit: number,
): Promise<SearchHit[]> {
  const query = terms.map((term) => `'${term}'`).join(" & ");
  const titlePatterns = terms.map((term) => `% ${term} %`);
  const titleMatch = titlePatterns
    .map((_, index) => `(' ' || s.title_words || ' ') LIKE $${index + 2}`)
    .join(" AND ");
  const { where, parameters } = filterClause(filter, titlePatterns.length + 1);
  where.unshift(`(h.seq IS NOT NULL OR (${titleMatch}))`);
  const all = [query, ...titlePatterns, ...parameters, limit];
  const sql = `WITH h AS (SELECT m.session_id, min(m.seq) AS seq FROM {messages} m WHERE m.words @@ $1::tsquery
      GROUP BY m.session_id)
    SELECT s.id, h.seq FROM {sessions} s LEFT JOIN h ON h.session_id = s.id${whereOf(where)}
    ORDER BY s.updated_at DESC, s.id DESC LIMIT $${all.length}`;
  const hits: SearchHit[] = [];
  for (const row of await queries.rows<{ id: string; seq: number | null }>(sql, all)) {
    const session = (await readSession(queries, row.id))!;
    const message =
      row.seq === null
        ? undefined
        : messageFromRow(
            (await queries.row<MessageRow>(`${MESSAGE_SELECT} WHERE m.session_id = $1 AND m.seq = $2`, [
              row.id,
              row.seq,
            ]))!,
          );
    hits.push(searchHit(session, message, terms));
  }
  return hits;
}

/** The newest session matching a filter. */
export async function latestSessionRow(
  queries: PostgresQueries,
  filter: SessionFilter,
): Promise<SessionRecord | undefined> {
  const { where, parameters } = filterClause(filter);
  const row = await queries.row<SessionRow>(
    `${SESSION_SELECT}${whereOf(where)} ORDER BY s.updated_at DESC, s.id DESC LIMIT 1`,
    parameters,
  );
  return row && sessionFromRow(row);
}
