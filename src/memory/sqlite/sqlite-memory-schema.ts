/**
 * The memory tables of a ctxkit SQLite database and their forward-only migrations. They live beside the
 * session tables in the same file; their version is kept in their own table (`memory_schema`), because
 * `PRAGMA user_version` belongs to the session schema.
 */
import { SchemaTooNewError } from "../../errors/index.ts";
import type { SqliteDatabase } from "../../store/sqlite/sqlite-database.ts";

const version1 = `
CREATE TABLE memories (
  row_id INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  owner TEXT NOT NULL,
  kind TEXT NOT NULL,
  scope TEXT NOT NULL,
  content TEXT NOT NULL,
  normalized TEXT NOT NULL,
  shingle_count INTEGER NOT NULL,
  source_session_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  expires_at TEXT,
  metadata TEXT NOT NULL
);
CREATE INDEX memories_by_owner ON memories (owner, updated_at DESC, id DESC);
CREATE INDEX memories_for_dedupe ON memories (owner, scope, kind, shingle_count);
CREATE INDEX memories_by_session ON memories (source_session_id) WHERE source_session_id IS NOT NULL;
CREATE INDEX memories_by_expiry ON memories (expires_at) WHERE expires_at IS NOT NULL;

CREATE VIRTUAL TABLE memory_words USING fts5 (words, tokenize = 'ascii', content = '', contentless_delete = 1);

CREATE TABLE memory_versions (
  owner TEXT PRIMARY KEY,
  version INTEGER NOT NULL
) WITHOUT ROWID;
`;

/** Migrations by target version; each runs once, in order, inside one transaction with the version bump. */
const MIGRATIONS: readonly { readonly version: number; readonly sql: string }[] = [
  { version: 1, sql: version1 },
];

/** The newest memory schema version this ctxkit writes. */
export const SQLITE_MEMORY_SCHEMA_VERSION = MIGRATIONS.at(-1)!.version;

function currentVersion(database: SqliteDatabase): number {
  const table = database.get<{ name: string }>(
    "SELECT name FROM sqlite_schema WHERE type = 'table' AND name = 'memory_schema'",
  );
  if (!table) return 0;
  return database.get<{ version: number }>("SELECT version FROM memory_schema WHERE id = 1")?.version ?? 0;
}

function checkVersion(database: SqliteDatabase, version: number): void {
  if (version > SQLITE_MEMORY_SCHEMA_VERSION) {
    throw new SchemaTooNewError(
      version,
      SQLITE_MEMORY_SCHEMA_VERSION,
      `${database.location} (memory tables)`,
    );
  }
}

/**
 * Refuses memory tables written by a newer ctxkit, then applies the missing migrations in one write
 * transaction (re-checking the version inside it, so two processes opening the file at once migrate it once).
 * Returns the versions applied.
 *
 * @example
 * migrateMemorySchema(database); // [1] on a new file, [] afterwards
 */
export function migrateMemorySchema(database: SqliteDatabase): number[] {
  const found = currentVersion(database);
  checkVersion(database, found);
  if (found === SQLITE_MEMORY_SCHEMA_VERSION) return [];
  return database.write(() => {
    const current = currentVersion(database);
    checkVersion(database, current);
    const applied: number[] = [];
    database.connection.exec(
      "CREATE TABLE IF NOT EXISTS memory_schema (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)",
    );
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      database.connection.exec(migration.sql);
      applied.push(migration.version);
    }
    database.run(
      "INSERT INTO memory_schema (id, version) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET version = excluded.version",
      SQLITE_MEMORY_SCHEMA_VERSION,
    );
    return applied;
  });
}
