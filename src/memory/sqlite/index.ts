/** The SQLite long-term memory store (`node:sqlite`, FTS5), beside the session tables in a ctxkit database. */
export { openSqliteMemoryStore, type SqliteMemoryStoreOptions } from "./open-sqlite-memory-store.ts";
export { SqliteMemoryStore } from "./sqlite-memory-store.ts";
export { SQLITE_MEMORY_SCHEMA_VERSION, migrateMemorySchema } from "./sqlite-memory-schema.ts";
