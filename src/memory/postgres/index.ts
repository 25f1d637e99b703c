/** The PostgreSQL long-term memory store (pg pool, GIN-indexed tsvector), beside the session tables. */
import type { PostgresDatabase } from "../../store/postgres/postgres-database.ts";
import { migratePostgres, POSTGRES_SCHEMA_VERSION } from "../../store/postgres/postgres-schema.ts";

export { openPostgresMemoryStore, type PostgresMemoryStoreOptions } from "./open-postgres-memory-store.ts";
export { PostgresMemoryStore } from "./postgres-memory-store.ts";

/**
 * The schema version of the memory tables: they are part of the one ctxkit schema now, so it is the schema's.
 *
 * @deprecated Use `POSTGRES_SCHEMA_VERSION`.
 */
export const POSTGRES_MEMORY_SCHEMA_VERSION = POSTGRES_SCHEMA_VERSION;

/**
 * Applies the missing migrations of the ctxkit schema (memory tables included); returns the versions applied.
 *
 * @deprecated Opening a store migrates its schema.
 * @example
 * await migratePostgresMemory(database);
 */
export function migratePostgresMemory(database: PostgresDatabase): Promise<number[]> {
  return migratePostgres(database);
}
