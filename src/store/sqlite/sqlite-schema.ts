/**
 * The SQLite schema and its forward-only migrations. The schema version lives in `PRAGMA user_version` and a
 * ctxkit database is marked with `PRAGMA application_id`, so a foreign SQLite file is recognised and refused.
 */
import { DatabaseSync } from "node:sqlite";
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

// Each session's governor state as of its latest write (`next_seq` then), so a restarted process governs on.
const version2 = `
CREATE TABLE governor_states (
  session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
  next_seq INTEGER NOT NULL,
  state TEXT NOT NULL
) WITHOUT ROWID;
`;

/** Migrations by target version; each runs once, in order, inside one transaction with the version bump. */
const MIGRATIONS: readonly { readonly version: number; readonly sql: string }[] = [
  { version: 1, sql: version1 },
  { version: 2, sql: version2 },
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

interface SchemaObject {
  readonly name: string;
  readonly sql: string | null;
}

let newestSchema: ReadonlyMap<string, string | null> | undefined;

/** The objects (tables, indexes, FTS shadow tables) and their SQL that the migrations create. */
function schemaObjectsOfNewest(): ReadonlyMap<string, string | null> {
  if (newestSchema) return newestSchema;
  const scratch = new DatabaseSync(":memory:");
  try {
    for (const migration of MIGRATIONS) scratch.exec(migration.sql);
    const rows = scratch.prepare("SELECT name, sql FROM sqlite_schema").all() as unknown as SchemaObject[];
    newestSchema = new Map(rows.map((row) => [row.name, row.sql]));
  } finally {
    scratch.close();
  }
  return newestSchema;
}

/**
 * True when a ctxkit file whose version mark was lost (`user_version` 0, tables present) holds exactly the
 * newest session schema: its version can be written back. Other tables (the memory store's) may sit beside it.
 */
function holdsNewestSchema(database: SqliteDatabase): boolean {
  const found = new Map(
    database.all<SchemaObject>("SELECT name, sql FROM sqlite_schema").map((row) => [row.name, row.sql]),
  );
  for (const [name, sql] of schemaObjectsOfNewest()) if (found.get(name) !== sql) return false;
  return true;
}

/** A ctxkit file with tables but no schema version: complete (its mark was lost) or refused. */
function checkUnversioned(database: SqliteDatabase, header: Header): void {
  if (header.applicationId !== SQLITE_APPLICATION_ID || header.version !== 0 || header.tables === 0) return;
  if (holdsNewestSchema(database)) return;
  throw new CorruptStoreError(
    database.location,
    "this ctxkit database has tables but no schema version (user_version 0), and they are not those of any ctxkit schema",
  );
}

/**
 * Refuses files that are not ctxkit databases or were written by a newer ctxkit, and ctxkit files without a
 * schema version whose tables are not a ctxkit schema. Runs before anything is written to the file, so a
 * refused file is left untouched.
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
  checkUnversioned(database, header);
}

/**
 * For a file opened read-only, which cannot be migrated: refuses one that holds no sessions schema yet (a new,
 * empty file) or an older one. A ctxkit file whose version mark was lost but whose tables are current is read.
 *
 * @example
 * requireCurrentSchema(database);
 */
export function requireCurrentSchema(database: SqliteDatabase): void {
  const header = readHeader(database);
  if (header.version === SQLITE_SCHEMA_VERSION) return;
  if (header.tables > 0 && holdsNewestSchema(database)) return;
  throw new CorruptStoreError(
    database.location,
    header.tables === 0
      ? "the file holds no ctxkit tables yet and was opened read-only; open it with write access once to create them"
      : `the file has schema version ${header.version} and was opened read-only; open it with write access once to upgrade it`,
  );
}

/**
 * Applies the missing migrations in one write transaction (re-checking the version inside it, so two
 * processes opening a new file at once migrate it once). A file whose version mark was lost but whose tables
 * are the newest schema only gets its mark back. Returns the versions applied.
 *
 * @example
 * migrate(database); // [1] on a new file, [] afterwards
 */
export function migrate(database: SqliteDatabase): number[] {
  if (readHeader(database).version === SQLITE_SCHEMA_VERSION) return [];
  return database.write(() => {
    checkSchema(database);
    const header = readHeader(database);
    const applied: number[] = [];
    const complete = header.version === 0 && header.tables > 0 && holdsNewestSchema(database);
    for (const migration of MIGRATIONS) {
      if (complete || migration.version <= header.version) continue;
      database.connection.exec(migration.sql);
      applied.push(migration.version);
    }
    database.connection.exec(`PRAGMA application_id = ${SQLITE_APPLICATION_ID}`);
    database.connection.exec(`PRAGMA user_version = ${SQLITE_SCHEMA_VERSION}`);
    return applied;
  });
}
