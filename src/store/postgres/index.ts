/** `ctxkit/postgres`: the PostgreSQL session store for many agent servers sharing one database. */
export { openPostgresSessionStore, type PostgresSessionStoreOptions } from "./open-postgres-session-store.ts";
export { PostgresSessionStore } from "./postgres-session-store.ts";
export { PostgresBlobStore } from "./postgres-blob-store.ts";
export { POSTGRES_SCHEMA_VERSION } from "./postgres-schema.ts";
export * from "../../memory/postgres/index.ts";
