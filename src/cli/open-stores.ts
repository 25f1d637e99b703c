import { existsSync } from "node:fs";
import type { Settings } from "../config/settings.ts";
import { NotFoundError, ValidationError } from "../errors/errors.ts";
import type { MemoryStore } from "../memory/memory-store.ts";
import { describePostgres } from "../store/postgres/postgres-location.ts";
import type { OpenRetentionOptions, SessionStore } from "../store/session-store.ts";

/** Which database a command uses. */
export type DatabaseChoice =
  { readonly kind: "sqlite"; readonly path: string } | { readonly kind: "postgres"; readonly url: string };

/**
 * The database named by `--db` / `--pg`, else by the settings: the `pgUrl` setting when set, else the `db` file.
 * `--db` wins over the `pgUrl` setting; giving both flags is a ValidationError.
 *
 * @example
 * chooseDatabase({ db: undefined, pg: undefined }, settings) // { kind: "sqlite", path: "~/.ctxkit/ctxkit.db" }
 */
export function chooseDatabase(
  flags: { readonly db?: string | undefined; readonly pg?: string | undefined },
  settings: Pick<Settings, "db" | "pgUrl">,
): DatabaseChoice {
  if (flags.db !== undefined && flags.pg !== undefined) {
    throw new ValidationError("--db and --pg name two databases; give one of them");
  }
  const url = flags.db === undefined ? (flags.pg ?? settings.pgUrl) : undefined;
  if (url !== undefined && url !== "") return { kind: "postgres", url };
  return { kind: "sqlite", path: flags.db ?? settings.db };
}

const MISSING_HINT =
  "check the path; reading never creates a database, storing a session (ctxkit import, ctxkit chat) does";

/** An opened session store, its memory store when asked for, and where they live in words. */
export interface OpenedStores {
  readonly sessions: SessionStore;
  readonly memories: MemoryStore | undefined;
  /** `SQLite <path>` or `PostgreSQL <url without password>`. */
  readonly location: string;
  close(): Promise<void>;
}

/** How `openStores` opens them. */
export interface OpenStoresOptions {
  /** Open the long-term memory store too, in the same database. */
  readonly memory: boolean;
  /** Opt-in retention at open (off unless `retentionDays` is above 0), reported to `onCleanup`. */
  readonly retention?: OpenRetentionOptions;
  /**
   * The command only reads: an existing SQLite file is opened read-only (so a file or folder without write
   * permission can still be listed and exported); a missing one is refused with a `NotFoundError` (a mistyped
   * path must not become a new, empty database), whose message ends with `missingHint`.
   */
  readonly readOnly?: boolean;
  /** What to tell the user when a read-only command names a SQLite file that does not exist. */
  readonly missingHint?: string;
  /** PostgreSQL pool size (short-lived commands need few connections). */
  readonly poolSize?: number;
  /**
   * SQLite writes on a writer thread with group commit (`ctxkit serve`: many concurrent sessions); one-shot
   * commands write inline.
   */
  readonly writerThread?: boolean;
}

/**
 * Opens the session store (and the memory store, when asked) of `database`; a SQLite file's folder is created
 * (unless the command only reads: then a missing file is a `NotFoundError`).
 * Opening never deletes a session (retention is `ctxkit sessions prune`). Backends are imported only when used,
 * so SQLite commands never load `pg`.
 *
 * @example
 * const stores = await openStores(chooseDatabase(flags, settings), { memory: false });
 * try { await stores.sessions.listSessions(); } finally { await stores.close(); }
 */
export async function openStores(
  database: DatabaseChoice,
  options: OpenStoresOptions,
): Promise<OpenedStores> {
  if (database.kind === "sqlite") {
    const { path } = database;
    const readOnly = options.readOnly === true && path !== ":memory:";
    if (readOnly && !existsSync(path)) {
      throw new NotFoundError("database", path, options.missingHint ?? MISSING_HINT);
    }
    const { openSqliteSessionStore } = await import("../store/sqlite/index.ts");
    const sessions = await openSqliteSessionStore({
      path,
      readOnly,
      ...options.retention,
      ...(options.writerThread === true && { writer: "worker" as const }),
    });
    return withMemory(sessions, `SQLite ${path}`, options.memory, async () => {
      const { openSqliteMemoryStore } = await import("../memory/sqlite/index.ts");
      return openSqliteMemoryStore({ path });
    });
  }
  const { url } = database;
  const { openPostgresSessionStore } = await import("../store/postgres/index.ts");
  const sessions = await openPostgresSessionStore({
    connectionString: url,
    ...options.retention,
    ...(options.poolSize !== undefined && { poolSize: options.poolSize }),
  });
  return withMemory(sessions, `PostgreSQL ${describePostgres(url)}`, options.memory, async () => {
    const { openPostgresMemoryStore } = await import("../memory/postgres/index.ts");
    return openPostgresMemoryStore({ connectionString: url });
  });
}

/** Pairs an open session store with its memory store (when wanted); closes the session store if that fails. */
async function withMemory(
  sessions: SessionStore,
  location: string,
  wanted: boolean,
  openMemory: () => Promise<MemoryStore>,
): Promise<OpenedStores> {
  let memories: MemoryStore | undefined;
  try {
    memories = wanted ? await openMemory() : undefined;
  } catch (error) {
    await sessions.close();
    throw error;
  }
  return {
    sessions,
    memories,
    location,
    close: async () => {
      await memories?.close();
      await sessions.close();
    },
  };
}
