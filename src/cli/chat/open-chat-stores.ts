import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Settings } from "../../config/settings.ts";
import type { MemoryStore } from "../../memory/memory-store.ts";
import type { SessionStore } from "../../store/session-store.ts";

/** The chat's session store, its memory store (when memory is on), and where they live in words. */
export interface ChatStores {
  readonly sessions: SessionStore;
  readonly memories: MemoryStore | undefined;
  /** `sqlite <file>` or `postgres <url without password>`. */
  readonly location: string;
  close(): Promise<void>;
}

function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = "";
    return parsed.toString();
  } catch {
    return "postgres";
  }
}

/**
 * Opens the stores the chat persists to: PostgreSQL when `pgUrl` is given (`--pg`, `CTXKIT_PG_URL` or the
 * `pgUrl` setting), else the SQLite file of the `db` setting (its folder is created). Long-term memory shares
 * the same database when `memory.enabled`. Backends are imported only when used.
 *
 * @example
 * const stores = await openChatStores(settings, { pgUrl: undefined });
 * try { await stores.sessions.listSessions(); } finally { await stores.close(); }
 */
export async function openChatStores(
  settings: Pick<Settings, "db" | "pgUrl" | "sessionRetentionDays" | "memory">,
  overrides: { pgUrl?: string | undefined; db?: string | undefined } = {},
): Promise<ChatStores> {
  const pgUrl = overrides.pgUrl ?? settings.pgUrl;
  const retentionDays = settings.sessionRetentionDays;
  if (pgUrl !== undefined && pgUrl !== "") {
    const { openPostgresSessionStore } = await import("../../store/postgres/index.ts");
    const sessions = await openPostgresSessionStore({ connectionString: pgUrl, retentionDays });
    let memories: MemoryStore | undefined;
    try {
      if (settings.memory.enabled) {
        const { openPostgresMemoryStore } = await import("../../memory/postgres/index.ts");
        memories = await openPostgresMemoryStore({ connectionString: pgUrl });
      }
    } catch (error) {
      await sessions.close();
      throw error;
    }
    return {
      sessions,
      memories,
      location: `postgres ${withoutPassword(pgUrl)}`,
      close: async () => {
        await memories?.close();
        await sessions.close();
      },
    };
  }
  const path = overrides.db ?? settings.db;
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const { openSqliteSessionStore } = await import("../../store/sqlite/index.ts");
  const sessions = await openSqliteSessionStore({ path, retentionDays });
  let memories: MemoryStore | undefined;
  try {
    if (settings.memory.enabled) {
      const { openSqliteMemoryStore } = await import("../../memory/sqlite/index.ts");
      memories = await openSqliteMemoryStore({ path });
    }
  } catch (error) {
    await sessions.close();
    throw error;
  }
  return {
    sessions,
    memories,
    location: `sqlite ${path}`,
    close: async () => {
      await memories?.close();
      await sessions.close();
    },
  };
}
