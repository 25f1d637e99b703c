/**
 * The SQLite schema and its forward-only migrations. The schema version lives in `PRAGMA user_version` and a
 * ctxkit database is marked with `PRAGMA application_id`, so a foreign SQLite file is recognised and refused.
 */
import { CorruptStoreError, SchemaTooNewError } from "../../errors/index.ts";
import type { SqliteDatabase } from "./sqlite-database.ts";

/** `PRAGMA application_id` of ctxkit databases ("ctk1"). */
export const SQLITE_APPLICATION_ID = 0x63746b31;

const version1 = `
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  owner TEXT,
  agent TEXT,
  title TEXT,
  title_words TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  parent_id TEXT,
  fork_seq INTEGER,
  message_count INTEGER NOT NULL,
  turn_count INTEGER NOT NULL,
  next_seq INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cache_read_tokens INTEGER NOT NULL,
  cache_write_tokens INTEGER NOT NULL,
  reasoning_tokens INTEGER NOT NULL,
  cost REAL NOT NULL,
  metadata TEXT NOT NULL,
  origin TEXT
);
CREATE INDEX sessions_by_update ON sessions (updated_at DESC, id DESC);
CREATE INDEX sessions_by_owner ON sessions (owner, updated_at DESC, id DESC);
CREATE INDEX sessions_by_agent ON sessions (agent, updated_at DESC, id DESC);
CREATE INDEX sessions_by_parent ON sessions (parent_id) WHERE parent_id IS NOT NULL;

CREATE TABLE messages (
  row_id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  position INTEGER NOT NULL,
  turn INTEGER NOT NULL,
  id TEXT NOT NULL,
  role TEXT NOT NULL,
  kind TEXT,
  tokens INTEGER,
  summarized_by INTEGER,
  created_at TEXT NOT NULL,
  body TEXT NOT NULL,
  UNIQUE (session_id, seq),
  UNIQUE (session_id, id)
);
CREATE INDEX messages_by_position ON messages (session_id, position, seq DESC);
CREATE INDEX messages_by_turn ON messages (session_id, turn);

CREATE VIRTUAL TABLE message_words USING fts5 (words, tokenize = 'ascii', content = '', contentless_delete = 1);

CREATE TABLE blobs (
  ref TEXT PRIMARY KEY,
  media_type TEXT NOT NULL,
  is_text INTEGER NOT NULL,
  size INTEGER NOT NULL,
  content BLOB NOT NULL
);
CREATE TABLE blob_links (
  session_id TEXT NOT NULL,
  ref TEXT NOT NULL REFERENCES blobs (ref),
  PRIMARY KEY (session_id, ref)
) WITHOUT ROWID;
CREATE INDEX blob_links_by_ref ON blob_links (ref);

CREATE TABLE sync_states (
  session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  agent TEXT NOT NULL,
  cursor TEXT NOT NULL,
  executor_session_id TEXT,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (session_id, agent)
) WITHOUT ROWID;
`;

/** Migrations by target version; each runs once, in order, inside one transaction with the version bump. */
const MIGRATIONS: readonly { readonly version: number; readonly sql: string }[] = [
  { version: 1, sql: version1 },
];

/** The newest schema version this ctxkit writes. */
export const SQLITE_SCHEMA_VERSION = MIGRATIONS.at(-1)!.version;

interface Header {
  readonly applicationId: number;
  readonly version: number;
  readonly tables: number;
}

/**
 * Reads the header in one statement, so it is one consistent snapshot: read piece by piece, another process's
 * first migration could commit in between (tables seen, application id not yet) and a new file would look foreign.
 */
function readHeader(database: SqliteDatabase): Header {
  return database.get<Header>(
    "SELECT (SELECT application_id FROM pragma_application_id()) AS applicationId, " +
      "(SELECT user_version FROM pragma_user_version()) AS version, " +
      "(SELECT count(*) FROM sqlite_schema) AS tables",
  )!;
}

/**
 * Refuses files that are not ctxkit databases or were written by a newer ctxkit. Runs before anything is
 * written to the file, so a refused file is left untouched.
 */
export function checkSchema(database: SqliteDatabase): void {
  const header = readHeader(database);
  if (header.applicationId !== 0 && header.applicationId !== SQLITE_APPLICATION_ID) {
    throw new CorruptStoreError(
      database.location,
      "this SQLite database belongs to another application, not ctxkit",
    );
  }
  if (header.applicationId === 0 && header.tables > 0) {
    throw new CorruptStoreError(
      database.location,
      "this SQLite database has tables but is not a ctxkit database",
    );
  }
  if (header.version > SQLITE_SCHEMA_VERSION) {
    throw new SchemaTooNewError(header.version, SQLITE_SCHEMA_VERSION, database.location);
  }
}

/**
 * Applies the missing migrations in one write transaction (re-checking the version inside it, so two
 * processes opening a new file at once migrate it once). Returns the versions applied.
 *
 * @example
 * migrate(database); // [1] on a new file, [] afterwards
 */
export function migrate(database: SqliteDatabase): number[] {
  if (readHeader(database).version === SQLITE_SCHEMA_VERSION) return [];
  return database.write(() => {
    checkSchema(database);
    const current = readHeader(database).version;
    const applied: number[] = [];
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      database.connection.exec(migration.sql);
      applied.push(migration.version);
    }
    database.connection.exec(`PRAGMA application_id = ${SQLITE_APPLICATION_ID}`);
    database.connection.exec(`PRAGMA user_version = ${SQLITE_SCHEMA_VERSION}`);
    return applied;
  });
}
