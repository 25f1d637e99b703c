import { openSqliteDatabase, type SqliteOpenOptions } from "../../store/sqlite/sqlite-open.ts";
import { SQLITE_MEMORY_TABLES_VERSION } from "../../store/sqlite/sqlite-schema.ts";
import { memoryStoreContext } from "../memory-plan.ts";
import type { MemoryStoreOptions } from "../memory-store.ts";
import { SqliteMemoryStore } from "./sqlite-memory-store.ts";

/** Options of `openSqliteMemoryStore`: where the file is, how to open it, and the clock and ids. */
export interface SqliteMemoryStoreOptions extends MemoryStoreOptions, SqliteOpenOptions {}

/**
 * Opens the SQLite memory store at `path` (created when missing). Pass the session store's path to keep
 * sessions and memories in one file: both open it with the same checks and pragmas (WAL, busy timeout,
 * synchronous) and the same migrations (one schema, one version). Throws `CorruptStoreError` for damaged or
 * foreign files, `SchemaTooNewError` when the file was written by a newer ctxkit and `StoreError` for
 * unwritable locations.
 *
 * @example
 * const path = join(homedir(), ".ctxkit", "ctxkit.db");
 * const sessions = await openSqliteSessionStore({ path });
 * const memories = await openSqliteMemoryStore({ path });
 */
export async function openSqliteMemoryStore(options: SqliteMemoryStoreOptions): Promise<SqliteMemoryStore> {
  const context = memoryStoreContext(options);
  const database = await openSqliteDatabase(options, SQLITE_MEMORY_TABLES_VERSION);
  return new SqliteMemoryStore(database, context);
}
