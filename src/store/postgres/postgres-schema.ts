/**
 * The version record of a ctxkit PostgreSQL schema, as the one migrator (../sql/schema-migrator.ts) reads and
 * writes it: the `ctxkit_schema` table (one row per version applied). Migrations run under an advisory lock, so
 * many servers starting at once migrate once.
 */
import { sql } from "kysely";
import { CorruptStoreError, SchemaTooNewError } from "../../errors/index.ts";
import {
  migrateSchema,
  newestVersion,
  type MigrationTarget,
  type SchemaVersion,
} from "../sql/schema-migrator.ts";
import type { SqlQueries } from "../sql/sql-database.ts";
import { qualify, type PostgresDatabase } from "./postgres-database.ts";
import { POSTGRES_MIGRATIONS } from "./postgres-migrations.ts";
import { ADVISORY_LOCK_SPACE } from "./postgres-store-dialect.ts";

export { ADVISORY_LOCK_SPACE };

/** The newest schema version this ctxkit writes. */
export const POSTGRES_SCHEMA_VERSION = newestVersion(POSTGRES_MIGRATIONS);

/** The version that brought the memory tables into the schema. */
export const POSTGRES_MEMORY_TABLES_VERSION = 4;

/** The version the memory tables recorded in `memory_schema` before they joined the schema. */
const LEGACY_MEMORY_VERSION = 1;

/** Reads the version record; refuses tables ctxkit did not create and memory tables of a newer ctxkit. */
async function inspect(
  database: PostgresDatabase,
  queries: SqlQueries,
  location: string,
): Promise<SchemaVersion> {
  const tables = await queries.all<{ table_name: string }>(
    sql`SELECT table_name FROM information_schema.tables WHERE table_schema = ${database.schema}
      AND table_name IN ('ctxkit_schema', 'sessions', 'memory_schema', 'memories')`,
  );
  const names = new Set(tables.map((table) => table.table_name));
  if (!names.has("ctxkit_schema") && names.has("sessions")) {
    throw new CorruptStoreError(
      location,
      "it has a sessions table that ctxkit did not create; use another schema",
    );
  }
  const version = async (table: string) =>
    (
      await queries.first<{ version: number | null }>(
        sql.raw(`SELECT max(version) AS version FROM ${qualify(database.schema, table)}`),
      )
    )?.version ?? 0;
  const recorded = names.has("ctxkit_schema") ? await version("ctxkit_schema") : 0;
  if (names.has("memory_schema")) {
    const memory = await version("memory_schema");
    if (memory > LEGACY_MEMORY_VERSION) {
      throw new SchemaTooNewError(memory, LEGACY_MEMORY_VERSION, `${location}, memory tables`);
    }
  } else if (names.has("memories") && recorded < POSTGRES_MEMORY_TABLES_VERSION) {
    throw new CorruptStoreError(
      location,
      "it has a memories table that ctxkit did not create; use another schema",
    );
  }
  return { recorded, holds: recorded };
}

/** The schema as the migrator sees it. */
function migrationTarget(database: PostgresDatabase): MigrationTarget {
  const location = `${database.location} (schema ${database.schema})`;
  return {
    location,
    inspect: (queries) => inspect(database, queries ?? database.queries, location),
    exclusive: (body) =>
      database.transaction(async (queries) => {
        await database.dialect.lock(queries, `schema:${database.schema}`);
        await queries.run(sql`CREATE SCHEMA IF NOT EXISTS ${sql.id(database.schema)}`);
        await queries.run(
          sql`CREATE TABLE IF NOT EXISTS ${database.dialect.table("ctxkit_schema")} (version integer NOT NULL)`,
        );
        return body(queries);
      }),
    execute: async (queries, ddl) => {
      await queries.run(
        sql.raw(ddl.replace(/\{([a-z_]+)\}/g, (_, table: string) => qualify(database.schema, table))),
      );
    },
    record: async (queries, version) => {
      await queries.run(
        sql`INSERT INTO ${database.dialect.table("ctxkit_schema")} (version) VALUES (${version})`,
      );
    },
  };
}

/**
 * Creates the schema when missing and applies pending migrations under an advisory lock; refuses a schema
 * written by a newer ctxkit and tables ctxkit did not create, changing nothing. Returns the versions applied.
 *
 * @example
 * await migratePostgres(database); // [1, 2, 3, 4] on an empty schema
 */
export function migratePostgres(database: PostgresDatabase): Promise<number[]> {
  return migrateSchema(migrationTarget(database), POSTGRES_MIGRATIONS);
}
