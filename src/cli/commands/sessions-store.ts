import { existsSync } from "node:fs";
import { homedir } from "node:os";
import type { Command } from "commander";
import { loadSettings } from "../../config/load-settings.ts";
import { settingDefinition } from "../../config/setting-definitions.ts";
import type { SettingSource, Settings } from "../../config/settings.ts";
import { MemorySessionStore } from "../../store/memory/index.ts";
import type { SessionStore } from "../../store/session-store.ts";
import { chooseDatabase, openStores } from "../open-stores.ts";
import type { CliIo } from "../program.ts";

/** The database flags every sessions command takes. */
export interface StoreFlags {
  readonly db?: string;
  readonly pg?: string;
}

/** An opened session store and where it is, in words (no password). */
export interface CliStore {
  readonly store: SessionStore;
  /** `SQLite <path>` or `PostgreSQL <url without password>`. */
  readonly location: string;
  readonly settings: Settings;
  close(): Promise<void>;
}

/** How a command uses the store. */
export interface CliStoreOptions {
  /** The command only reads: an existing SQLite file is opened read-only, so it works without write access. */
  readonly readOnly?: boolean;
}

/**
 * Adds `--db <path>` and `--pg <url>` to a command.
 *
 * @example
 * withStoreOptions(program.command("list")).action(…);
 */
export function withStoreOptions(command: Command): Command {
  return command
    .option("--db <path>", "SQLite database file (default: the db setting, ~/.ctxkit/ctxkit.db; CTXKIT_DB)")
    .option("--pg <url>", "PostgreSQL URL instead of SQLite (default: the pgUrl setting; CTXKIT_PG_URL)");
}

/**
 * Opens the session store a command names: `--pg`, else `--db`, else the settings (`pgUrl` when set, else the
 * `db` file, whose folder is created). Opening never deletes a session: retention (`sessionRetentionDays`)
 * runs only in `ctxkit sessions prune`. A command that only reads passes `readOnly`: then a SQLite file that
 * does not exist is a `NotFoundError` naming it and how to fix it (nothing is created), except the default
 * database before anything was stored, which reads as an empty store. Backends are imported only when used.
 *
 * @example
 * const opened = await openCliStore({ db: "/tmp/a.db" }, io);
 * try { await opened.store.listSessions(); } finally { await opened.close(); }
 */
export async function openCliStore(
  flags: StoreFlags,
  io: CliIo,
  options: CliStoreOptions = {},
): Promise<CliStore> {
  const home = io.env["HOME"] ?? homedir();
  const { settings, sources } = loadSettings({ cwd: process.cwd(), env: io.env, home });
  const database = chooseDatabase(flags, settings);
  const readOnly = options.readOnly === true;
  if (readOnly && database.kind === "sqlite" && flags.db === undefined && sources["db"]?.kind === "default") {
    // Nothing stored on this machine yet: no sessions, and no database made just to say so.
    if (!existsSync(database.path)) return emptyStore(database.path, settings);
  }
  const opened = await openStores(database, {
    memory: false,
    readOnly,
    missingHint: missingDatabaseHint(flags.db === undefined ? sources["db"] : undefined, home, io.env),
    poolSize: 2,
  });
  return { store: opened.sessions, location: opened.location, settings, close: () => opened.close() };
}

/** The empty store a read-only command sees before the default database exists. */
function emptyStore(path: string, settings: Settings): CliStore {
  const store = new MemorySessionStore();
  return { store, location: `SQLite ${path} (not created yet)`, settings, close: () => store.close() };
}

/** How to fix a database path that does not exist, by where the path came from (`undefined`: `--db`). */
function missingDatabaseHint(
  source: SettingSource | undefined,
  home: string,
  env: Readonly<Record<string, string | undefined>>,
): string {
  const named =
    source === undefined
      ? "the --db path"
      : source.kind === "env"
        ? source.variable
        : source.kind === "default"
          ? "the path"
          : `the db setting in ${source.file}`;
  const defaultPath = settingDefinition("db")?.defaultValue?.({ env, home });
  return (
    `check ${named}${typeof defaultPath === "string" ? ` (the default database is ${defaultPath})` : ""}; ` +
    "reading never creates a database, storing a session (ctxkit import, ctxkit chat) does"
  );
}

/**
 * Runs `body` with the opened store and closes it afterwards, whatever happens.
 *
 * @example
 * await withCliStore(flags, io, async ({ store }) => store.listSessions());
 */
export async function withCliStore<T>(
  flags: StoreFlags,
  io: CliIo,
  body: (opened: CliStore) => Promise<T>,
  options: CliStoreOptions = {},
): Promise<T> {
  const opened = await openCliStore(flags, io, options);
  try {
    return await body(opened);
  } finally {
    await opened.close();
  }
}

/**
 * `withCliStore` for a command that only reads: an existing SQLite file is opened read-only, so the command
 * works without write permission on it or its folder.
 *
 * @example
 * await withReadOnlyCliStore(flags, io, async ({ store }) => store.listSessions());
 */
export function withReadOnlyCliStore<T>(
  flags: StoreFlags,
  io: CliIo,
  body: (opened: CliStore) => Promise<T>,
): Promise<T> {
  return withCliStore(flags, io, body, { readOnly: true });
}
