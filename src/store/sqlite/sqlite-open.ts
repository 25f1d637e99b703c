import { existsSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { DatabaseSync } from "node:sqlite";
import { FileAccessError, StoreError } from "../../errors/index.ts";
import { ensureDirectory } from "../../errors/ensure-directory.ts";
import { SqliteDatabase } from "./sqlite-database.ts";
import { sqliteErrorCode, toStoreError } from "./sqlite-errors.ts";
import { checkSchema, migrate, requireSchema } from "./sqlite-schema.ts";

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
  /**
   * Open an existing file for reading only: nothing is created, migrated or written (a write raises
   * `FileAccessError`), so a file or folder without write permission can still be listed and exported.
   */
  readonly readOnly?: boolean;
  /**
   * `first-write` (default): before its first write, the connection runs `PRAGMA quick_check` (about 0.4 s
   * per 100k stored messages) and refuses to write into a damaged file (`CorruptStoreError`). `off` skips it.
   */
  readonly integrityCheck?: "first-write" | "off";
}

/** SQLITE_READONLY_DIRECTORY: a WAL database whose folder is read-only and whose `-shm` index is missing. */
const READONLY_DIRECTORY = 1544;

/**
 * Opens (creating when missing) a ctxkit SQLite database: refuses foreign, damaged and newer-schema files
 * before changing them, then sets WAL mode and the pragmas and applies pending migrations. With `readOnly`
 * the file must exist and is only read: its tables must be at `readableFrom` (the version whose tables the
 * caller reads) or newer.
 *
 * @example
 * const database = await openSqliteDatabase({ path: "~/.ctxkit/ctxkit.db" }, 2);
 */
export async function openSqliteDatabase(
  options: SqliteOpenOptions,
  readableFrom: number,
): Promise<SqliteDatabase> {
  const memory = options.path === ":memory:";
  const location = memory ? ":memory:" : resolve(options.path);
  if (!memory) checkLocation(location, options.readOnly === true);
  const connection = connect(location, options);
  const database = new SqliteDatabase(connection, location, {
    readOnly: options.readOnly === true,
    integrityCheck: options.integrityCheck !== "off",
  });
  try {
    checkSchema(database);
    if (options.readOnly !== true) {
      connection.exec("PRAGMA journal_mode = WAL");
      connection.exec(`PRAGMA synchronous = ${options.synchronous === "normal" ? "NORMAL" : "FULL"}`);
    }
    connection.exec("PRAGMA foreign_keys = ON");
    for (const [name, value] of Object.entries(options.pragmas ?? {})) {
      if (!/^[a-z_]+$/.test(name)) throw new StoreError(`invalid pragma name "${name}"`);
      connection.exec(
        `PRAGMA ${name} = ${typeof value === "number" ? value : `'${value.replaceAll("'", "''")}'`}`,
      );
    }
    if (options.readOnly === true) requireSchema(database, readableFrom);
    else await migrate(database);
    return database;
  } catch (error) {
    await database.close();
    throw toStoreError(error, location);
  }
}

/** Refuses a folder given as the database and creates the database's folder (unless only reading). */
function checkLocation(location: string, readOnly: boolean): void {
  let isDirectory = false;
  try {
    isDirectory = statSync(location).isDirectory();
  } catch {
    // Missing (created below, or refused when read-only) or unreadable (SQLite says why when opening it).
  }
  if (isDirectory) {
    throw new FileAccessError(
      location,
      "is a folder, not a database file; give the path of a file (e.g. …/ctxkit.db)",
    );
  }
  if (readOnly) {
    if (!existsSync(location)) {
      throw new FileAccessError(
        location,
        "does not exist; check the path (reading never creates a database)",
      );
    }
    return;
  }
  ensureDirectory(dirname(location));
}

/**
 * The connection. A read-only WAL database in a read-only folder cannot be read the usual way when its `-shm`
 * index is missing (SQLite cannot create it): it is then opened `immutable`, which is safe because no writer
 * can keep a write-ahead log in that folder either — unless one is left over, whose commits an immutable
 * reader would not see (refused).
 */
function connect(location: string, options: SqliteOpenOptions): DatabaseSync {
  const timeout = options.busyTimeoutMs ?? 5000;
  try {
    const connection = new DatabaseSync(location, { timeout, readOnly: options.readOnly === true });
    if (options.readOnly !== true) return connection;
    try {
      connection.prepare("SELECT count(*) FROM sqlite_schema").get();
      return connection;
    } catch (error) {
      connection.close();
      if (sqliteErrorCode(error) !== READONLY_DIRECTORY) throw error;
    }
    if (existsSync(`${location}-wal`)) {
      throw new FileAccessError(
        location,
        "cannot be read: its folder is read-only and its write-ahead log has no index; open it once with write access",
      );
    }
    const url = pathToFileURL(location);
    url.search = "?immutable=1";
    return new DatabaseSync(url, { timeout, readOnly: true });
  } catch (error) {
    throw toStoreError(error, location);
  }
}
