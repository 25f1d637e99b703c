import { CorruptStoreError } from "../../errors/index.ts";
import type { SqliteDatabase } from "../../store/sqlite/sqlite-database.ts";
import { indexedText } from "../memory-plan.ts";
import type { Memory, MemoryKind, MemoryMetadata, MemoryScope } from "../memory-store.ts";

/** The columns of `memories` a query selects (table alias `m`). */
export const MEMORY_COLUMNS =
  "m.row_id, m.id, m.owner, m.kind, m.scope, m.content, m.source_session_id, m.created_at, m.updated_at, " +
  "m.expires_at, m.metadata";

/** A selected `memories` row. */
export interface MemoryRow {
  readonly row_id: number;
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

/**
 * The memory a row holds. Throws `CorruptStoreError` when its metadata is not JSON.
 *
 * @example
 * database.all<MemoryRow>(`SELECT ${MEMORY_COLUMNS} FROM memories m`).map((row) => memoryFromRow(row, location));
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

/** Inserts a memory and its words; returns its row id. Call inside a write transaction. */
export function insertMemory(database: SqliteDatabase, memory: Memory): number {
  const { normalized, shingleCount } = indexedText(memory.content);
  const row = database.get<{ row_id: number }>(
    `INSERT INTO memories (id, owner, kind, scope, content, normalized, shingle_count, source_session_id,
       created_at, updated_at, expires_at, metadata)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING row_id`,
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
  )!;
  database.run("INSERT INTO memory_words (rowid, words) VALUES (?, ?)", row.row_id, normalized);
  return row.row_id;
}

/** Rewrites a stored memory (same row) and its words. Call inside a write transaction. */
export function replaceMemory(database: SqliteDatabase, rowId: number, memory: Memory): void {
  const { normalized, shingleCount } = indexedText(memory.content);
  database.run(
    `UPDATE memories SET kind = ?, scope = ?, content = ?, normalized = ?, shingle_count = ?,
       source_session_id = ?, updated_at = ?, expires_at = ?, metadata = ?
     WHERE row_id = ?`,
    memory.kind,
    memory.scope,
    memory.content,
    normalized,
    shingleCount,
    memory.sourceSessionId ?? null,
    memory.updatedAt,
    memory.expiresAt ?? null,
    JSON.stringify(memory.metadata),
    rowId,
  );
  database.run("DELETE FROM memory_words WHERE rowid = ?", rowId);
  database.run("INSERT INTO memory_words (rowid, words) VALUES (?, ?)", rowId, normalized);
}

/** Deletes memory rows and their words. Call inside a write transaction. */
export function deleteMemoryRows(database: SqliteDatabase, rowIds: readonly number[]): void {
  for (const rowId of rowIds) {
    database.run("DELETE FROM memory_words WHERE rowid = ?", rowId);
    database.run("DELETE FROM memories WHERE row_id = ?", rowId);
  }
}

/** Adds one to the owner's version. Call inside a write transaction. */
export function bumpVersion(database: SqliteDatabase, owner: string): void {
  database.run(
    "INSERT INTO memory_versions (owner, version) VALUES (?, 1) ON CONFLICT (owner) DO UPDATE SET version = version + 1",
    owner,
  );
}
