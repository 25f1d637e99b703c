import type { PostgresQueries } from "../../store/postgres/postgres-database.ts";
import { indexedText } from "../memory-plan.ts";
import type { Memory, MemoryKind, MemoryMetadata, MemoryScope } from "../memory-store.ts";

/** The columns of `{memories}` a query selects (table alias `m`). */
export const MEMORY_COLUMNS =
  "m.id, m.owner, m.kind, m.scope, m.content, m.source_session_id, m.created_at, m.updated_at, m.expires_at, " +
  "m.metadata";

/** A selected `{memories}` row (`json` metadata arrives parsed). */
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
  readonly metadata: MemoryMetadata;
}

/**
 * The memory a row holds.
 *
 * @example
 * (await queries.rows<MemoryRow>(`SELECT ${MEMORY_COLUMNS} FROM {memories} m`)).map(memoryFromRow);
 */
export function memoryFromRow(row: MemoryRow): Memory {
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
    metadata: row.metadata,
  });
}

/** Inserts a memory with its search words (ctxkit's normalised words, as lexemes). */
export async function insertMemory(queries: PostgresQueries, memory: Memory): Promise<void> {
  const { normalized, shingleCount } = indexedText(memory.content);
  await queries.run(
    `INSERT INTO {memories} (id, owner, kind, scope, content, normalized, shingle_count, source_session_id,
       created_at, updated_at, expires_at, metadata, words)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::json, array_to_tsvector(string_to_array($6, ' ')))`,
    [
      memory.id,
      memory.owner,
      memory.kind,
      memory.scope,
      memory.content,
      normalized,
      shingleCount,
      memory.sourceSessionId ?? null,
      memory.createdAt,
      memory.updatedAt,
      memory.expiresAt ?? null,
      JSON.stringify(memory.metadata),
    ],
  );
}

/** Rewrites a stored memory and its search words. */
export async function replaceMemory(queries: PostgresQueries, memory: Memory): Promise<void> {
  const { normalized, shingleCount } = indexedText(memory.content);
  await queries.run(
    `UPDATE {memories} SET kind = $2, scope = $3, content = $4, normalized = $5, shingle_count = $6,
       source_session_id = $7, updated_at = $8, expires_at = $9, metadata = $10::json,
       words = array_to_tsvector(string_to_array($5, ' '))
     WHERE id = $1`,
    [
      memory.id,
      memory.kind,
      memory.scope,
      memory.content,
      normalized,
      shingleCount,
      memory.sourceSessionId ?? null,
      memory.updatedAt,
      memory.expiresAt ?? null,
      JSON.stringify(memory.metadata),
    ],
  );
}

/** Adds one to each owner's version. */
export async function bumpVersions(queries: PostgresQueries, owners: Iterable<string>): Promise<void> {
  for (const owner of owners) {
    await queries.run(
      `INSERT INTO {memory_versions} (owner, version) VALUES ($1, 1)
       ON CONFLICT (owner) DO UPDATE SET version = {memory_versions}.version + 1`,
      [owner],
    );
  }
}
