/** The SQLite session and blob stores (published with the memory store as `ctxkit/sqlite`, src/sqlite.ts). */
export { openSqliteSessionStore, type SqliteSessionStoreOptions } from "./open-sqlite-session-store.ts";
export { SqliteSessionStore } from "./sqlite-session-store.ts";
export { SqlBlobStore as SqliteBlobStore } from "../sql/sql-blob-store.ts";
export { SQLITE_SCHEMA_VERSION, SQLITE_APPLICATION_ID } from "./sqlite-schema.ts";
export type { SqliteOpenOptions } from "./sqlite-open.ts";
