/** The PostgreSQL session and blob stores (published with the memory store as `ctxkit/postgres`, src/postgres.ts). */
export { openPostgresSessionStore, type PostgresSessionStoreOptions } from "./open-postgres-session-store.ts";
export { PostgresSessionStore } from "./postgres-session-store.ts";
export { PostgresTurnLocks } from "./postgres-turn-locks.ts";
export { SqlBlobStore as PostgresBlobStore } from "../sql/sql-blob-store.ts";
export { POSTGRES_SCHEMA_VERSION } from "./postgres-schema.ts";
