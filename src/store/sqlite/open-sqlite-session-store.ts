import { applyOpenRetention } from "../open-retention.ts";
import type { OpenRetentionOptions, SessionStoreOptions } from "../session-store.ts";
import { storeContext } from "../store-context.ts";
import { openSqliteDatabase, type SqliteOpenOptions } from "./sqlite-open.ts";
import { SQLITE_SESSION_TABLES_VERSION } from "./sqlite-schema.ts";
import { SqliteSessionStore } from "./sqlite-session-store.ts";
import { SqliteWriterClient } from "./sqlite-writer-client.ts";

/** Options of `openSqliteSessionStore`. */
export interface SqliteSessionStoreOptions
  extends SessionStoreOptions, SqliteOpenOptions, OpenRetentionOptions {
  /**
   * Where writes run. `inline` (the default): on the calling thread, one transaction each — the fastest for one
   * writer appending turn after turn. `worker`: a writer thread owns the write connection and commits the turns
   * that arrive together in one transaction (group commit), so the event loop never waits on a COMMIT and many
   * concurrent sessions share each fsync; each write still resolves only once it is durable. For servers
   * (`ctxkit serve` uses it): measured in bench/RESULTS.md. In-memory and read-only stores are always `inline`.
   */
  readonly writer?: "worker" | "inline";
  /**
   * The writer thread's script (`writer: "worker"`), for an application that bundles ctxkit: a bundler does not
   * emit the script beside the store's module, so point this at ctxkit's own
   * (`node_modules/ctxkit/dist/store/sqlite/sqlite-writer-worker.js`) or at a bundle of it. Default: the script
   * beside the store's module.
   */
  readonly writerScript?: string | URL;
}

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
  const database = await openSqliteDatabase(options, SQLITE_SESSION_TABLES_VERSION);
  const useWorker = options.writer === "worker" && database.location !== ":memory:" && !database.readOnly;
  let writer: SqliteWriterClient | undefined;
  if (useWorker) {
    try {
      writer = await SqliteWriterClient.start(
        {
          path: database.location,
          busyTimeoutMs: options.busyTimeoutMs,
          synchronous: options.synchronous,
          pragmas: options.pragmas,
          integrityCheck: options.integrityCheck,
          prices: context.prices,
          inlineMediaLimit: context.inlineMediaLimit,
        },
        options.writerScript,
      );
    } catch (error) {
      await database.close();
      throw error;
    }
  }
  const store = new SqliteSessionStore(database, context, writer);
  // With a writer thread, that thread indexes what earlier processes left queued.
  if (!writer) store.startIndexing();
  await applyOpenRetention(store, options);
  return store;
}
