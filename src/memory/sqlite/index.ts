/** The SQLite long-term memory store (`node:sqlite`, FTS5), beside the session tables in a ctxkit database. */
import type { SqliteDatabase } from "../../store/sqlite/sqlite-database.ts";
import { migrate, SQLITE_SCHEMA_VERSION } from "../../store/sqlite/sqlite-schema.ts";

export { openSqliteMemoryStore, type SqliteMemoryStoreOptions } from "./open-sqlite-memory-store.ts";
export { SqliteMemoryStore } from "./sqlite-memory-store.ts";

/**
 * The schema version of the memory tables: they are part of the one ctxkit schema now, so it is the database's.
 *
 * @deprecated Use `SQLITE_SCHEMA_VERSION`.
 */
export const SQLITE_MEMORY_SCHEMA_VERSION = SQLITE_SCHEMA_VERSION;

/**
 * Applies the missing migrations of the ctxkit schema (memory tables included); returns the versions applied.
 *
 * @deprecated Opening a store migrates its database.
 * @example
 * await migrateMemorySchema(database);
 */
export function migrateMemorySchema(database: SqliteDatabase): Promise<number[]> {
  return migrate(database);
}
