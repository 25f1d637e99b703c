import { homedir } from "node:os";
import type { Command } from "commander";
import { loadSettings } from "../../config/load-settings.ts";
import type { Settings } from "../../config/settings.ts";
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
 * The settings of the CLI's environment (`io.env`, its `HOME`, the working folder).
 *
 * @example
 * const { settings } = cliSettings(io);
 */
export function cliSettings(io: CliIo): Settings {
  return loadSettings({ cwd: process.cwd(), env: io.env, home: io.env["HOME"] ?? homedir() }).settings;
}

/**
 * Opens the session store a command names: `--pg`, else `--db`, else the settings (`pgUrl` when set, else the
 * `db` file, whose folder is created). Opening never deletes a session: retention (`sessionRetentionDays`)
 * runs only in `ctxkit sessions prune`. A command that only reads passes `readOnly`. Backends are imported
 * only when used.
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
  const settings = cliSettings(io);
  const opened = await openStores(chooseDatabase(flags, settings), {
    memory: false,
    readOnly: options.readOnly === true,
    poolSize: 2,
  });
  return { store: opened.sessions, location: opened.location, settings, close: () => opened.close() };
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
