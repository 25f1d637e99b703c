/**
 * The version record of a ctxkit SQLite database, as the one migrator (../sql/schema-migrator.ts) reads and
 * writes it: `PRAGMA user_version`, with `PRAGMA application_id` marking the file as ctxkit's so a foreign SQLite
 * file is recognised and refused.
 */
import { DatabaseSync } from "node:sqlite";
import { CorruptStoreError, SchemaTooNewError } from "../../errors/index.ts";
import {
  migrateSchema,
  newestVersion,
  refuseNewer,
  type MigrationTarget,
  type SchemaVersion,
} from "../sql/schema-migrator.ts";
import type { SqliteDatabase } from "./sqlite-database.ts";
import { SQLITE_MIGRATIONS } from "./sqlite-migrations.ts";

/** `PRAGMA application_id` of ctxkit databases ("ctk1"). */
export const SQLITE_APPLICATION_ID = 0x63746b31;

/** The newest schema version this ctxkit writes. */
export const SQLITE_SCHEMA_VERSION = newestVersion(SQLITE_MIGRATIONS);

/** The version whose session tables this ctxkit reads (a read-only store opens files from it on). */
export const SQLITE_SESSION_TABLES_VERSION = 2;

/** The version that brought the memory tables into the schema. */
export const SQLITE_MEMORY_TABLES_VERSION = 3;

/** The version the memory tables recorded in `memory_schema` before they joined the schema. */
const LEGACY_MEMORY_VERSION = 1;

interface Header {
  readonly applicationId: number;
  readonly version: number;
  readonly tables: number;
  readonly memories: number;
  readonly legacyMemory: number;
}

/**
 * Reads the header in one statement, so it is one consistent snapshot: read piece by piece, another process's
 * first migration could commit in between (tables seen, application id not yet) and a new file would look foreign.
 */
function readHeader(connection: DatabaseSync): Header {
  return connection
    .prepare(
      "SELECT (SELECT application_id FROM pragma_application_id()) AS applicationId, " +
        "(SELECT user_version FROM pragma_user_version()) AS version, " +
        "(SELECT count(*) FROM sqlite_schema) AS tables, " +
        "(SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'memories') AS memories, " +
        "(SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'memory_schema') AS legacyMemory",
    )
    .get() as unknown as Header;
}

interface SchemaObject {
  readonly name: string;
  readonly sql: string | null;
}

const schemas = new Map<number, ReadonlyMap<string, string | null>>();

/** The objects (tables, indexes, FTS shadow tables) and their SQL that the migrations up to `version` create. */
function schemaObjectsAt(version: number): ReadonlyMap<string, string | null> {
  let objects = schemas.get(version);
  if (objects) return objects;
  const scratch = new DatabaseSync(":memory:");
  try {
    for (const migration of SQLITE_MIGRATIONS) {
      if (migration.version <= version) scratch.exec(migration.sql);
    }
    const rows = scratch.prepare("SELECT name, sql FROM sqlite_schema").all() as unknown as SchemaObject[];
    objects = new Map(rows.map((row) => [row.name, row.sql]));
  } finally {
    scratch.close();
  }
  schemas.set(version, objects);
  return objects;
}

/**
 * The newest version whose objects a ctxkit file holds exactly (0 for none): how far a file whose version mark
 * was lost (`user_version` 0, tables present) got. Other tables may sit beside them.
 */
function versionHeld(connection: DatabaseSync): number {
  const found = new Map(
    (connection.prepare("SELECT name, sql FROM sqlite_schema").all() as unknown as SchemaObject[]).map(
      (row) => [row.name, row.sql],
    ),
  );
  for (let version = SQLITE_SCHEMA_VERSION; version > 0; version--) {
    const expected = schemaObjectsAt(version);
    if ([...expected].every(([name, sql]) => found.get(name) === sql)) return version;
  }
  return 0;
}

/** The version a file records and holds, and how many schema objects it has. */
interface Inspection extends SchemaVersion {
  readonly tables: number;
}

/**
 * Refuses files that are not ctxkit databases or were written by a newer ctxkit, and ctxkit files without a
 * schema version whose tables are not a ctxkit schema. Writes nothing.
 */
function inspect(database: SqliteDatabase): Inspection {
  const { location, connection } = database;
  const header = readHeader(connection);
  if (header.applicationId !== 0 && header.applicationId !== SQLITE_APPLICATION_ID) {
    throw new CorruptStoreError(location, "this SQLite database belongs to another application, not ctxkit");
  }
  if (header.applicationId === 0 && header.tables > 0) {
    throw new CorruptStoreError(location, "this SQLite database has tables but is not a ctxkit database");
  }
  refuseNewer(header.version, SQLITE_SCHEMA_VERSION, location);
  if (header.legacyMemory > 0) {
    const row = connection.prepare("SELECT max(version) AS version FROM memory_schema").get() as
      { version: number | null } | undefined;
    const version = row?.version ?? 0;
    if (version > LEGACY_MEMORY_VERSION) {
      throw new SchemaTooNewError(version, LEGACY_MEMORY_VERSION, `${location} (memory tables)`);
    }
  } else if (header.memories > 0 && header.version > 0 && header.version < SQLITE_MEMORY_TABLES_VERSION) {
    throw new CorruptStoreError(location, "it has a memories table that ctxkit did not create");
  }
  if (header.version === 0 && header.tables > 0) {
    const held = versionHeld(connection);
    if (held === 0) {
      throw new CorruptStoreError(
        location,
        "this ctxkit database has tables but no schema version (user_version 0), and they are not those of any ctxkit schema",
      );
    }
    return { recorded: 0, holds: held, tables: header.tables };
  }
  return { recorded: header.version, holds: header.version, tables: header.tables };
}

/**
 * Refuses files that are not ctxkit databases or were written by a newer ctxkit, before anything is written to
 * them (so a refused file is left untouched).
 *
 * @example
 * checkSchema(database);
 */
export function checkSchema(database: SqliteDatabase): void {
  inspect(database);
}

/**
 * For a file opened read-only, which cannot be migrated: refuses one whose tables are older than `minimum`
 * (a new, empty file holds none). A ctxkit file whose version mark was lost but whose tables are recent enough
 * is read.
 *
 * @example
 * requireSchema(database, 2);
 */
export function requireSchema(database: SqliteDatabase, minimum: number): void {
  const found = inspect(database);
  if (found.holds >= minimum) return;
  throw new CorruptStoreError(
    database.location,
    found.tables === 0
      ? "the file holds no ctxkit tables yet and was opened read-only; open it with write access once to create them"
      : `the file has schema version ${found.recorded} and was opened read-only; open it with write access once to upgrade it`,
  );
}

/** The file as the migrator sees it. */
function migrationTarget(database: SqliteDatabase): MigrationTarget {
  return {
    location: database.location,
    inspect: async () => inspect(database),
    // A write transaction (BEGIN IMMEDIATE): the first write of a connection checks the file's pages first.
    exclusive: (body) => database.write(body),
    execute: async (_queries, sql) => database.connection.exec(sql),
    record: async (_queries, version) => {
      database.connection.exec(`PRAGMA application_id = ${SQLITE_APPLICATION_ID}`);
      database.connection.exec(`PRAGMA user_version = ${version}`);
    },
  };
}

/**
 * Applies the missing migrations in one write transaction (re-checking the version inside it, so two
 * processes opening a new file at once migrate it once). A file whose version mark was lost gets it back.
 * Returns the versions applied.
 *
 * @example
 * await migrate(database); // [1, 2, 3] on a new file, [] afterwards
 */
export function migrate(database: SqliteDatabase): Promise<number[]> {
  return migrateSchema(migrationTarget(database), SQLITE_MIGRATIONS);
}
