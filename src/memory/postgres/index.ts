/** The PostgreSQL long-term memory store (pg pool, GIN-indexed tsvector), beside the session tables. */
export { openPostgresMemoryStore, type PostgresMemoryStoreOptions } from "./open-postgres-memory-store.ts";
export { PostgresMemoryStore } from "./postgres-memory-store.ts";
export { POSTGRES_MEMORY_SCHEMA_VERSION, migratePostgresMemory } from "./postgres-memory-schema.ts";
