import type { SessionStoreOptions } from "../session-store.ts";
import { storeContext } from "../store-context.ts";
import { openSqliteDatabase, type SqliteOpenOptions } from "./sqlite-open.ts";
import { SqliteSessionStore } from "./sqlite-session-store.ts";

/** Options of `openSqliteSessionStore`. */
export interface SqliteSessionStoreOptions extends SessionStoreOptions, SqliteOpenOptions {
  /** Sessions not updated for this many days are deleted when the store opens (default 30; 0 keeps all). */
  readonly retentionDays?: number;
}

/**
 * Opens the SQLite session store at `path` (created when missing), migrating its schema and applying the
 * retention policy. Throws `CorruptStoreError` for damaged or foreign files, `SchemaTooNewError` for files
 * written by a newer ctxkit and `StoreError` for unwritable locations — never changing such a file.
 *
 * @example
 * const store = await openSqliteSessionStore({ path: join(homedir(), ".ctxkit", "ctxkit.db") });
 * await store.appendTurn(sessionId, turn, { expectedNextSeq });
 */
export async function openSqliteSessionStore(
  options: SqliteSessionStoreOptions,
): Promise<SqliteSessionStore> {
  const context = storeContext(options);
  const store = new SqliteSessionStore(openSqliteDatabase(options), context);
  try {
    await store.cleanup(options.retentionDays ?? 30);
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}
