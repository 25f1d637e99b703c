/** Reading and writing `memories` rows of a ctxkit SQL database (SQLite and PostgreSQL). */
import { sql, type RawBuilder, type SqlBool } from "kysely";
import { CorruptStoreError } from "../../errors/index.ts";
import type { SqlTarget } from "../../store/sql/sql-database.ts";
import type { MemoryRowValues } from "../../store/sql/store-dialect.ts";
import { indexedText } from "../memory-plan.ts";
import type { ParsedMemoryFilter } from "../memory-schemas.ts";
import type { Memory, MemoryKind, MemoryMetadata, MemoryScope } from "../memory-store.ts";

/** A selected `memories` row (metadata as JSON text). */
export interface MemoryRow {
  readonly id: string;
  readonly owner: string;
  readonly kind: string;
  readonly scope: string;
  readonly content: string;
  readonly source_session_id: string | null;
  readonly created_at: string;
  readonly updated_at: string;
  readonly expires_at: string | null;
  readonly metadata: string;
}

/** The columns of `memories` (alias `m`) a query selects, as `MemoryRow`. */
export function memoryColumns({ dialect }: SqlTarget): RawBuilder<unknown> {
  return sql`m.id, m.owner, m.kind, m.scope, m.content, m.source_session_id, m.created_at, m.updated_at,
    m.expires_at, ${dialect.jsonText("m.metadata")} AS metadata`;
}

/** Newest first; ids compared bytewise in both databases. */
export function newestFirstOrder({ dialect }: SqlTarget): RawBuilder<unknown> {
  return sql`m.updated_at DESC, ${dialect.bytewise("m.id")} DESC`;
}

/** The conditions joined with AND. */
export function allOf(conditions: readonly RawBuilder<SqlBool>[]): RawBuilder<SqlBool> {
  return sql<SqlBool>`${sql.join(conditions, sql` AND `)}`;
}

/** Not expired at `now` (alias `m`). */
export const activeAt = (now: string) => sql<SqlBool>`(m.expires_at IS NULL OR m.expires_at > ${now})`;

/**
 * The conditions (on alias `m`) of a memory filter: owner, scopes, kinds, source session, excluded session and
 * "not expired at `now`".
 *
 * @example
 * const where = allOf(filterConditions(filter, now));
 */
export function filterConditions(filter: ParsedMemoryFilter, now: string): RawBuilder<SqlBool>[] {
  const anyOf = (column: string, values: readonly string[]) =>
    values.length === 0 ? sql<SqlBool>`1 = 0` : sql<SqlBool>`${sql.ref(column)} IN (${sql.join(values)})`;
  const conditions = [sql<SqlBool>`m.owner = ${filter.owner}`, activeAt(now)];
  if (filter.scopes !== undefined) conditions.push(anyOf("m.scope", filter.scopes));
  if (filter.kinds !== undefined) conditions.push(anyOf("m.kind", filter.kinds));
  if (filter.sourceSessionId !== undefined)
    conditions.push(sql<SqlBool>`m.source_session_id = ${filter.sourceSessionId}`);
  if (filter.excludeSessionId !== undefined)
    conditions.push(sql<SqlBool>`m.source_session_id IS DISTINCT FROM ${filter.excludeSessionId}`);
  return conditions;
}

/** How many of `terms` are whole words of `m.normalized` (words are single-space separated). */
export function matchedTerms({ dialect }: SqlTarget, terms: readonly string[]): RawBuilder<number> {
  const padded = sql<string>`(' ' || m.normalized || ' ')`;
  const each = terms.map(
    (term) => sql`(CASE WHEN ${dialect.contains(padded, ` ${term} `)} THEN 1 ELSE 0 END)`,
  );
  return sql<number>`${sql.join(each, sql` + `)}`;
}

/**
 * The memory a row holds. Throws `CorruptStoreError` when its metadata is not JSON.
 *
 * @example
 * rows.map((row) => memoryFromRow(row, database.location));
 */
export function memoryFromRow(row: MemoryRow, location: string): Memory {
  let metadata: MemoryMetadata;
  try {
    metadata = JSON.parse(row.metadata) as MemoryMetadata;
  } catch (error) {
    throw new CorruptStoreError(location, `memory ${row.id} has unreadable metadata`, { cause: error });
  }
  return Object.freeze({
    id: row.id,
    owner: row.owner,
    kind: row.kind as MemoryKind,
    scope: row.scope as MemoryScope,
    content: row.content,
    ...(row.source_session_id !== null && { sourceSessionId: row.source_session_id }),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.expires_at !== null && { expiresAt: row.expires_at }),
    metadata,
  });
}

/** The columns a memory is written with, its normalised words included. */
export function memoryRowValues(memory: Memory): MemoryRowValues {
  const { normalized, shingleCount } = indexedText(memory.content);
  return {
    id: memory.id,
    owner: memory.owner,
    kind: memory.kind,
    scope: memory.scope,
    content: memory.content,
    normalized,
    shingle_count: shingleCount,
    source_session_id: memory.sourceSessionId ?? null,
    created_at: memory.createdAt,
    updated_at: memory.updatedAt,
    expires_at: memory.expiresAt ?? null,
    metadata: JSON.stringify(memory.metadata),
  };
}
