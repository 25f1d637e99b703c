import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { StoreError } from "../../errors/index.ts";
import { SqliteDatabase, toStoreError } from "./sqlite-database.ts";
import { checkSchema, migrate } from "./sqlite-schema.ts";

/** How to open the SQLite file. */
export interface SqliteOpenOptions {
  /** Database file; `:memory:` for a private in-memory database. The folder is created when missing. */
  readonly path: string;
  /** How long a writer waits for another process's write lock (default 5000 ms). */
  readonly busyTimeoutMs?: number;
  /**
   * `full` (default) fsyncs the write-ahead log at every commit, so a turn reported saved survives a power
   * loss; `normal` survives process crashes only (faster; the last commits may roll back on power loss).
   */
  readonly synchronous?: "full" | "normal";
  /** Extra pragmas run after the defaults, e.g. `{ cache_size: -64000 }` or `{ max_page_count: 1000 }`. */
  readonly pragmas?: { readonly [name: string]: string | number };
}

/**
 * Opens (creating when missing) a ctxkit SQLite database: refuses foreign, damaged and newer-schema files
 * before changing them, then sets WAL mode and the pragmas and applies pending migrations.
 *
 * @example
 * const database = openSqliteDatabase({ path: "~/.ctxkit/ctxkit.db" });
 */
export function openSqliteDatabase(options: SqliteOpenOptions): SqliteDatabase {
  const memory = options.path === ":memory:";
  const location = memory ? ":memory:" : resolve(options.path);
  if (!memory) {
    try {
      mkdirSync(dirname(location), { recursive: true });
    } catch (error) {
      throw new StoreError(
        `${location}: cannot create the database folder (${(error as Error).message}); choose a writable location`,
        false,
        { cause: error },
      );
    }
  }
  const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
  let connection: DatabaseSync;
  try {
    connection = new DatabaseSync(location, { timeout: busyTimeoutMs });
  } catch (error) {
    throw toStoreError(error, location);
  }
  const database = new SqliteDatabase(connection, location);
  try {
    checkSchema(database);
    connection.exec("PRAGMA journal_mode = WAL");
    connection.exec(`PRAGMA synchronous = ${options.synchronous === "normal" ? "NORMAL" : "FULL"}`);
    connection.exec("PRAGMA foreign_keys = ON");
    for (const [name, value] of Object.entries(options.pragmas ?? {})) {
      if (!/^[a-z_]+$/.test(name)) throw new StoreError(`invalid pragma name "${name}"`);
      connection.exec(
        `PRAGMA ${name} = ${typeof value === "number" ? value : `'${value.replaceAll("'", "''")}'`}`,
      );
    }
    migrate(database);
    return database;
  } catch (error) {
    database.close();
    throw toStoreError(error, location);
  }
}
