/**
 * The memory tables of a ctxkit PostgreSQL schema and their forward-only migrations, recorded in their own
 * table (`{memory_schema}`) and applied under an advisory lock so many servers starting at once migrate once.
 * They may share a schema with the session tables. Metadata is `json` (not `jsonb`), which keeps key order.
 */
import { CorruptStoreError, SchemaTooNewError } from "../../errors/index.ts";
import type { PostgresDatabase } from "../../store/postgres/postgres-database.ts";
import { ADVISORY_LOCK_SPACE } from "../../store/postgres/postgres-schema.ts";

const version1 = `
CREATE TABLE {memories} (
  id text COLLATE "C" PRIMARY KEY,
  owner text COLLATE "C" NOT NULL,
  kind text NOT NULL,
  scope text NOT NULL,
  content text NOT NULL,
  normalized text NOT NULL,
  shingle_count integer NOT NULL,
  source_session_id text COLLATE "C",
  created_at text COLLATE "C" NOT NULL,
  updated_at text COLLATE "C" NOT NULL,
  expires_at text COLLATE "C",
  metadata json NOT NULL,
  words tsvector NOT NULL
);
CREATE INDEX memories_by_owner ON {memories} (owner, updated_at DESC, id DESC);
CREATE INDEX memories_for_dedupe ON {memories} (owner, scope, kind, shingle_count);
CREATE INDEX memories_by_session ON {memories} (source_session_id) WHERE source_session_id IS NOT NULL;
CREATE INDEX memories_by_expiry ON {memories} (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX memories_by_words ON {memories} USING gin (words);

CREATE TABLE {memory_versions} (
  owner text COLLATE "C" PRIMARY KEY,
  version bigint NOT NULL
);
`;

const MIGRATIONS: readonly { readonly version: number; readonly sql: string }[] = [
  { version: 1, sql: version1 },
];

/** The newest memory schema version this ctxkit writes. */
export const POSTGRES_MEMORY_SCHEMA_VERSION = MIGRATIONS.at(-1)!.version;

/**
 * Creates the schema when missing and applies pending memory migrations; refuses memory tables written by a
 * newer ctxkit and a `memories` table ctxkit did not create. Returns the versions applied.
 *
 * @example
 * await migratePostgresMemory(database); // [1] on an empty schema
 */
export async function migratePostgresMemory(database: PostgresDatabase): Promise<number[]> {
  const location = `${database.location} (schema ${database.schema}, memory tables)`;
  return database.transaction(async (queries) => {
    await queries.run("SELECT pg_advisory_xact_lock($1, hashtext($2))", [
      ADVISORY_LOCK_SPACE,
      `memory-schema:${database.schema}`,
    ]);
    await queries.run(`CREATE SCHEMA IF NOT EXISTS "${database.schema.replaceAll('"', '""')}"`);
    const tables = await queries.rows<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name IN ('memory_schema', 'memories')",
      [database.schema],
    );
    const names = new Set(tables.map((table) => table.table_name));
    if (!names.has("memory_schema") && names.has("memories")) {
      throw new CorruptStoreError(
        location,
        "it has a memories table that ctxkit did not create; use another schema",
      );
    }
    await queries.run("CREATE TABLE IF NOT EXISTS {memory_schema} (version integer NOT NULL)");
    const current =
      (await queries.row<{ version: number | null }>("SELECT max(version) AS version FROM {memory_schema}"))
        ?.version ?? 0;
    if (current > POSTGRES_MEMORY_SCHEMA_VERSION) {
      throw new SchemaTooNewError(current, POSTGRES_MEMORY_SCHEMA_VERSION, location);
    }
    const applied: number[] = [];
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      await queries.run(migration.sql);
      await queries.run("INSERT INTO {memory_schema} (version) VALUES ($1)", [migration.version]);
      applied.push(migration.version);
    }
    return applied;
  });
}
