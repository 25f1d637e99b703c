/**
 * The PostgreSQL schema and its forward-only migrations, recorded in `{ctxkit_schema}` and applied under an
 * advisory lock so many servers starting at once migrate once. Message bodies are `json` (not `jsonb`) because
 * `json` keeps key order, which keeps exports byte-identical. Session metadata is kept twice: `metadata` (`jsonb`,
 * for `@>` filters; it reorders keys) and, since version 2, `metadata_json` (`json`, as written; what loads read).
 */
import { CorruptStoreError, SchemaTooNewError } from "../../errors/index.ts";
import type { PostgresDatabase } from "./postgres-database.ts";

/** First key of every ctxkit advisory lock ("ctk"). */
export const ADVISORY_LOCK_SPACE = 0x63746b;

const version1 = `
CREATE TABLE {sessions} (
  id text COLLATE "C" PRIMARY KEY,
  owner text,
  agent text,
  title text,
  title_words text NOT NULL DEFAULT '',
  created_at text NOT NULL,
  updated_at text COLLATE "C" NOT NULL,
  parent_id text,
  fork_seq integer,
  message_count integer NOT NULL,
  turn_count integer NOT NULL,
  next_seq integer NOT NULL,
  input_tokens bigint NOT NULL,
  output_tokens bigint NOT NULL,
  cache_read_tokens bigint NOT NULL,
  cache_write_tokens bigint NOT NULL,
  reasoning_tokens bigint NOT NULL,
  cost double precision NOT NULL,
  metadata jsonb NOT NULL,
  origin json
);
CREATE INDEX sessions_by_update ON {sessions} (updated_at DESC, id DESC);
CREATE INDEX sessions_by_owner ON {sessions} (owner, updated_at DESC, id DESC);
CREATE INDEX sessions_by_agent ON {sessions} (agent, updated_at DESC, id DESC);
CREATE INDEX sessions_by_parent ON {sessions} (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX sessions_by_metadata ON {sessions} USING gin (metadata jsonb_path_ops);

CREATE TABLE {messages} (
  session_id text COLLATE "C" NOT NULL REFERENCES {sessions} (id) ON DELETE CASCADE,
  seq integer NOT NULL,
  position integer NOT NULL,
  turn integer NOT NULL,
  id text NOT NULL,
  role text NOT NULL,
  kind text,
  tokens integer,
  summarized_by integer,
  created_at text NOT NULL,
  body json NOT NULL,
  words tsvector NOT NULL,
  PRIMARY KEY (session_id, seq),
  UNIQUE (session_id, id)
);
CREATE INDEX messages_by_position ON {messages} (session_id, position, seq DESC);
CREATE INDEX messages_by_turn ON {messages} (session_id, turn);
CREATE INDEX messages_by_words ON {messages} USING gin (words);

CREATE TABLE {blobs} (
  ref text PRIMARY KEY,
  media_type text NOT NULL,
  is_text boolean NOT NULL,
  size integer NOT NULL,
  content bytea NOT NULL
);
CREATE TABLE {blob_links} (
  session_id text NOT NULL,
  ref text NOT NULL REFERENCES {blobs} (ref),
  PRIMARY KEY (session_id, ref)
);
CREATE INDEX blob_links_by_ref ON {blob_links} (ref);

CREATE TABLE {sync_states} (
  session_id text NOT NULL REFERENCES {sessions} (id) ON DELETE CASCADE,
  agent text COLLATE "C" NOT NULL,
  cursor json NOT NULL,
  executor_session_id text,
  updated_at text NOT NULL,
  PRIMARY KEY (session_id, agent)
);
`;

// jsonb sorts object keys, so metadata read back from it exported differently from SQLite's. Rows written
// before this migration keep jsonb's order (the original is gone).
const version2 = `
ALTER TABLE {sessions} ADD COLUMN metadata_json json;
UPDATE {sessions} SET metadata_json = metadata::json;
ALTER TABLE {sessions} ALTER COLUMN metadata_json SET NOT NULL;
`;

// Each session's governor state as of its latest write (`next_seq` then), so a restarted process governs on.
// json, not jsonb: a state is read back with its keys in the order it was written.
const version3 = `
CREATE TABLE {governor_states} (
  session_id text PRIMARY KEY REFERENCES {sessions} (id) ON DELETE CASCADE,
  next_seq integer NOT NULL,
  state json NOT NULL
);
`;

const MIGRATIONS: readonly { readonly version: number; readonly sql: string }[] = [
  { version: 1, sql: version1 },
  { version: 2, sql: version2 },
  { version: 3, sql: version3 },
];

/** The newest schema version this ctxkit writes. */
export const POSTGRES_SCHEMA_VERSION = MIGRATIONS.at(-1)!.version;

/**
 * Creates the schema when missing and applies pending migrations; refuses a schema written by a newer ctxkit
 * and a schema holding a `sessions` table ctxkit did not create. Returns the versions applied.
 *
 * @example
 * await migratePostgres(database); // [1] on an empty schema
 */
export async function migratePostgres(database: PostgresDatabase): Promise<number[]> {
  const location = `${database.location} (schema ${database.schema})`;
  return database.transaction(async (queries) => {
    await queries.run("SELECT pg_advisory_xact_lock($1, hashtext($2))", [
      ADVISORY_LOCK_SPACE,
      `schema:${database.schema}`,
    ]);
    await queries.run(`CREATE SCHEMA IF NOT EXISTS "${database.schema.replaceAll('"', '""')}"`);
    const tables = await queries.rows<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name IN ('ctxkit_schema', 'sessions')",
      [database.schema],
    );
    const names = new Set(tables.map((table) => table.table_name));
    if (!names.has("ctxkit_schema") && names.has("sessions")) {
      throw new CorruptStoreError(
        location,
        "it has a sessions table that ctxkit did not create; use another schema",
      );
    }
    await queries.run("CREATE TABLE IF NOT EXISTS {ctxkit_schema} (version integer NOT NULL)");
    const current =
      (await queries.row<{ version: number }>("SELECT max(version) AS version FROM {ctxkit_schema}"))
        ?.version ?? 0;
    if (current > POSTGRES_SCHEMA_VERSION)
      throw new SchemaTooNewError(current, POSTGRES_SCHEMA_VERSION, location);
    const applied: number[] = [];
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      await queries.run(migration.sql);
      await queries.run("INSERT INTO {ctxkit_schema} (version) VALUES ($1)", [migration.version]);
      applied.push(migration.version);
    }
    return applied;
  });
}
