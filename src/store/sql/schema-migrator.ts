/**
 * The one schema migrator of ctxkit's SQL databases. Each dialect has its list of numbered, forward-only
 * migrations (their DDL differs) and keeps one version record (SQLite: `PRAGMA user_version`; PostgreSQL: the
 * `ctxkit_schema` table); the rules are the same for both: a foreign database is refused and a database written
 * by a newer ctxkit is refused — both before anything is written — and the missing migrations run in one
 * exclusive transaction, re-checked inside it so concurrent openers migrate once.
 */
import { SchemaTooNewError } from "../../errors/index.ts";
import type { SqlQueries } from "./sql-database.ts";

/** One schema change: the database goes to `version` once `sql` ran. */
export interface Migration {
  readonly version: number;
  /** DDL, one or more statements. */
  readonly sql: string;
}

/** What a database's version record says, and which version its tables hold. */
export interface SchemaVersion {
  /** The version recorded (0 when none). */
  readonly recorded: number;
  /**
   * The version the tables are at: the recorded one, or, for a ctxkit database whose record was lost, the
   * version whose tables it holds.
   */
  readonly holds: number;
}

/** One database as the migrator sees it: its version record and exclusive access. */
export interface MigrationTarget {
  /** Where the database is, for errors. */
  readonly location: string;
  /**
   * Reads the version record without writing anything; throws `CorruptStoreError` for a database that is not
   * ctxkit's. `queries` is the exclusive transaction's, when inside one.
   */
  inspect(queries?: SqlQueries): Promise<SchemaVersion>;
  /** Runs `body` holding the database exclusively, in one transaction (committed whole or not at all). */
  exclusive<T>(body: (queries: SqlQueries) => Promise<T>): Promise<T>;
  /** Runs a migration's DDL. */
  execute(queries: SqlQueries, sql: string): Promise<void>;
  /** Records that the database is at `version`. */
  record(queries: SqlQueries, version: number): Promise<void>;
}

/** The version the last migration of a list reaches. */
export function newestVersion(migrations: readonly Migration[]): number {
  return migrations.at(-1)?.version ?? 0;
}

/** Throws `SchemaTooNewError` for a version past the newest this ctxkit knows. */
export function refuseNewer(version: number, newest: number, location: string): void {
  if (version > newest) throw new SchemaTooNewError(version, newest, location);
}

/**
 * Brings a database to the newest version: refuses foreign and newer databases before writing to them, then
 * applies the missing migrations in one exclusive transaction. Returns the versions applied.
 *
 * @example
 * await migrateSchema(target, SQLITE_MIGRATIONS); // [1, 2, 3] on a new file, [] afterwards
 */
export async function migrateSchema(
  target: MigrationTarget,
  migrations: readonly Migration[],
): Promise<number[]> {
  const newest = newestVersion(migrations);
  const found = await target.inspect();
  refuseNewer(found.recorded, newest, target.location);
  if (found.recorded === newest) return [];
  return target.exclusive(async (queries) => {
    const current = await target.inspect(queries);
    refuseNewer(current.recorded, newest, target.location);
    const applied: number[] = [];
    for (const migration of migrations) {
      if (migration.version <= current.holds) continue;
      await target.execute(queries, migration.sql);
      await target.record(queries, migration.version);
      applied.push(migration.version);
    }
    // A record that was lost (the tables already at the newest version) is written back.
    if (applied.length === 0 && current.recorded !== newest) await target.record(queries, newest);
    return applied;
  });
}
