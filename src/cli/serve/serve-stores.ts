import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { MemoryStore } from "../../memory/memory-store.ts";
import { openPostgresMemoryStore } from "../../memory/postgres/open-postgres-memory-store.ts";
import { openSqliteMemoryStore } from "../../memory/sqlite/open-sqlite-memory-store.ts";
import { openPostgresSessionStore } from "../../store/postgres/open-postgres-session-store.ts";
import type { SessionStore } from "../../store/session-store.ts";
import { openSqliteSessionStore } from "../../store/sqlite/open-sqlite-session-store.ts";

/** Where `ctxkit serve` keeps sessions (and memories, in the same database). */
export type ServeDatabase =
  { readonly kind: "sqlite"; readonly path: string } | { readonly kind: "postgres"; readonly url: string };

/** The opened stores. */
export interface ServeStores {
  readonly store: SessionStore;
  readonly memory: MemoryStore | undefined;
  /** The database in words, without credentials. */
  readonly description: string;
  close(): Promise<void>;
}

/**
 * A PostgreSQL URL without its password, for messages.
 *
 * @example
 * describePostgres("postgres://app:secret@db:5432/ctxkit"); // "postgres://app@db:5432/ctxkit"
 */
export function describePostgres(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = "";
    return parsed.toString();
  } catch {
    return "postgres";
  }
}

/**
 * Opens the session store and, when memory is on, the memory store in the same database.
 *
 * @example
 * const stores = await openServeStores({ kind: "sqlite", path: settings.db }, { memory: true, retentionDays: 30 });
 */
export async function openServeStores(
  database: ServeDatabase,
  options: { memory: boolean; retentionDays: number },
): Promise<ServeStores> {
  if (database.kind === "sqlite") {
    mkdirSync(dirname(database.path), { recursive: true });
    const store = await openSqliteSessionStore({ path: database.path, retentionDays: options.retentionDays });
    return withMemory(store, `SQLite ${database.path}`, options.memory, () =>
      openSqliteMemoryStore({ path: database.path }),
    );
  }
  const store = await openPostgresSessionStore({
    connectionString: database.url,
    retentionDays: options.retentionDays,
  });
  return withMemory(store, `PostgreSQL ${describePostgres(database.url)}`, options.memory, () =>
    openPostgresMemoryStore({ connectionString: database.url }),
  );
}

/** Pairs an open session store with its memory store (when wanted); closes the session store if that fails. */
async function withMemory(
  store: ServeStores["store"],
  description: string,
  wanted: boolean,
  openMemory: () => Promise<MemoryStore>,
): Promise<ServeStores> {
  let memory: MemoryStore | undefined;
  try {
    memory = wanted ? await openMemory() : undefined;
  } catch (error) {
    await store.close();
    throw error;
  }
  return {
    store,
    memory,
    description,
    close: async () => {
      await memory?.close();
      await store.close();
    },
  };
}
