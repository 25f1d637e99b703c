import { createHash } from "node:crypto";
import { WriteQueue } from "../../conversation/write-queue.ts";
import { ConcurrentWriteError } from "../../errors/errors.ts";
import type { MessageInput } from "../../model/message.ts";
import type { SessionStore } from "../../store/session-store.ts";
import { entryContent } from "../../sync/ledger-entry.ts";
import { SYNC_STORE_ID_PREFIX } from "../tenancy/tenant-session-id.ts";
import type { LedgerState } from "../../sync/ledger-state.ts";
import { SessionStoreSyncStateStore } from "../../sync/session-store-sync-state.ts";
import type { SyncStateStore } from "../../sync/sync-state-store.ts";

/** The agent name of the sessions that hold `/v1/sync` conversations and their sync state. */
export const SYNC_SESSION_AGENT = "ctxkit-sync";

/** Opens a session whose ledger has no user entry yet (a session store creates a session with a user message). */
const OPENING = "[agent-sync session opened]";

/**
 * The session-store id of a tenant's sync session: `sync:<tenant>:<id>`, or a digest of both when that is too long
 * for a session id. Two tenants choosing the same sync session id get different sessions.
 *
 * @example
 * syncSessionId("acme", "phone-1"); // "sync:acme:phone-1"
 */
export function syncSessionId(tenant: string, sessionId: string): string {
  const readable = `${SYNC_STORE_ID_PREFIX}${tenant}:${sessionId}`;
  if (readable.length <= 200) return readable;
  return `${SYNC_STORE_ID_PREFIX}${createHash("sha256").update(`${tenant}\n${sessionId}`).digest("hex")}`;
}

/**
 * A tenant's `/v1/sync` state in the server's session store (memory, SQLite or PostgreSQL), instead of a file
 * beside it. Each sync session is a session of the tenant (owner = tenant, agent `ctxkit-sync`) holding the
 * conversation ledger's entries as messages, one each, in order — so it shows in the tenant's session list and
 * exports, and its last write time is its last exchange (the 7-day cleanup counts from it) — with the ledger,
 * cursors and executor session ids in its sync rows (`SessionStoreSyncStateStore`). Every save mirrors the
 * entries appended since the previous one; the session is created by the first.
 *
 * @example
 * const hub = new SyncHub({ store: new TenantSyncStateStore(sessions, "acme"), executors });
 */
export class TenantSyncStateStore implements SyncStateStore {
  readonly #sessions: SessionStore;
  readonly #tenant: string;
  readonly #states: SessionStoreSyncStateStore;
  /** Saves of one session read its next seq and then append: they must not interleave. */
  readonly #queue = new WriteQueue();

  constructor(sessions: SessionStore, tenant: string) {
    this.#sessions = sessions;
    this.#tenant = tenant;
    this.#states = new SessionStoreSyncStateStore(sessions);
  }

  load(sessionId: string): Promise<LedgerState | undefined> {
    return this.#states.load(syncSessionId(this.#tenant, sessionId));
  }

  save(sessionId: string, state: LedgerState): Promise<void> {
    return this.#queue.run(() => this.#save(sessionId, state));
  }

  async #save(sessionId: string, state: LedgerState): Promise<void> {
    const id = syncSessionId(this.#tenant, sessionId);
    const record = await this.#sessions.getSession(id);
    if (record !== undefined && record.owner !== this.#tenant) {
      // Only a session stored outside the server's API (or before API ids were scoped) can hold this id.
      throw new ConcurrentWriteError(
        id,
        "the id of this sync session is taken by a session of another owner",
      );
    }
    const previous = record === undefined ? undefined : await this.#states.load(id);
    const from = mirroredUpTo(previous, state);
    const fresh: MessageInput[] = state.entries.slice(Math.max(0, from - state.dropped)).map((entry) => ({
      role: entry.role,
      content: [{ type: "text", text: entryContent(entry) }],
      createdAt: entry.at,
      ...(entry.agent !== undefined && { metadata: { agent: entry.agent } }),
    }));
    if (record === undefined && fresh[0]?.role !== "user") {
      fresh.unshift({ role: "user", content: [{ type: "text", text: OPENING }] });
    }
    if (fresh.length > 0) {
      await this.#sessions.appendTurn(id, fresh, {
        expectedNextSeq: record?.nextSeq ?? 0,
        expectedOwner: this.#tenant,
        session: { owner: this.#tenant, agent: SYNC_SESSION_AGENT, title: `sync ${sessionId}` },
      });
    }
    await this.#states.save(id, state);
  }

  delete(sessionId: string): Promise<boolean> {
    return this.#states.delete(syncSessionId(this.#tenant, sessionId));
  }
}

/**
 * The absolute ledger position up to which the session already holds the entries of `state`'s ledger: where the
 * previous save's ledger ended, or 0 when `state` is another ledger (`new_session` started it over: the entry
 * the previous one ended with is not at its place).
 */
function mirroredUpTo(previous: LedgerState | undefined, state: LedgerState): number {
  if (previous === undefined) return 0;
  const end = previous.dropped + previous.entries.length;
  const last = previous.entries.at(-1);
  if (last === undefined) return end;
  const index = end - 1 - state.dropped;
  if (index < 0) return end; // trimmed out of the window since: the ledger only grew
  const now = state.entries[index];
  const same = now !== undefined && now.role === last.role && now.text === last.text && now.at === last.at;
  return same ? end : 0;
}

/**
 * Deletes the sync sessions (of every tenant) whose last exchange is older than `olderThanDays` days, with their
 * sync state; 0 keeps them all. The Contop seed cleans sessions older than 7 days up on server start. Returns how
 * many were deleted.
 *
 * @example
 * await cleanupSyncSessions(store, 7, new Date());
 */
export async function cleanupSyncSessions(
  sessions: SessionStore,
  olderThanDays: number,
  now: Date,
): Promise<number> {
  if (olderThanDays <= 0) return 0;
  const cutoff = new Date(now.getTime() - olderThanDays * 86_400_000).toISOString();
  const stale: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await sessions.listSessions({
      agent: SYNC_SESSION_AGENT,
      limit: 1_000,
      ...(cursor !== undefined && { cursor }),
    });
    for (const record of page.sessions) if (record.updatedAt < cutoff) stale.push(record.id);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  let deleted = 0;
  for (const id of stale) if (await sessions.deleteSession(id)) deleted++;
  return deleted;
}
