import { applyOpenRetention } from "../open-retention.ts";
import type { OpenRetentionOptions, SessionStoreOptions } from "../session-store.ts";
import { storeContext } from "../store-context.ts";
import { openSqliteDatabase, type SqliteOpenOptions } from "./sqlite-open.ts";
import { SqliteSessionStore } from "./sqlite-session-store.ts";

/** Options of `openSqliteSessionStore`. */
export interface SqliteSessionStoreOptions
  extends SessionStoreOptions, SqliteOpenOptions, OpenRetentionOptions {}

/**
 * Opens the SQLite session store at `path` (created when missing) and migrates its schema. Opening never
 * deletes sessions unless `retentionDays` asks for it (see `OpenRetentionOptions`); `readOnly` opens an
 * existing file for reading only. Throws `CorruptStoreError` for damaged or foreign files, `SchemaTooNewError`
 * for files written by a newer ctxkit and `FileAccessError` for paths it cannot use — never changing such a
 * file.
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
  await applyOpenRetention(store, options);
  return store;
}
