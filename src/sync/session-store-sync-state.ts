import { NotFoundError, ValidationError } from "../errors/errors.ts";
import type { JsonValue } from "../model/message.ts";
import type { SessionStore } from "../store/session-store.ts";
import { parseLedgerState, type LedgerState } from "./ledger-state.ts";
import type { SyncStateStore } from "./sync-state-store.ts";

/** Agent name of the sync row that holds a session's whole ledger state; no real agent may use it. */
export const LEDGER_SYNC_AGENT = "ctxkit.ledger";

const MISSING_HINT =
  "the sync state of a session lives in that session's row of the session store; let the conversation agent " +
  "run its first turn through the engine (it creates the session) before syncing, or use JsonFileSyncStateStore";

/**
 * A `SyncStateStore` over any durable `SessionStore` (memory, SQLite, PostgreSQL), so cursors and executor
 * session ids survive a server restart together with the conversation itself.
 *
 * Layout: the whole validated `LedgerState` is the cursor JSON of the reserved agent `ctxkit.ledger`; besides,
 * every agent's cursor and executor session id is mirrored into its own sync row, so `SessionRecord.
 * executorSessionIds` and exports show them. `load` reads only the ledger row. `setSyncState` is atomic per agent
 * only, so `save` writes the mirror rows first and the ledger row last: a crash in between leaves the previous
 * complete ledger state (the mirrors may then be ahead; the next save fixes them).
 *
 * The session must already exist in the store: `save` and `delete` throw `NotFoundError` when it does not;
 * `load` returns `undefined`. A session store cannot delete one sync row, so `delete` stores `null` as the
 * ledger row (read back as "no state") and clears the mirrors (cursor `null`, no executor session id).
 * Deleting the session itself (`SessionStore.deleteSession`) removes every sync row.
 *
 * @example
 * const sessions = await openSqliteSessionStore({ path: "ctxkit.db" });
 * const hub = new SyncHub({ store: new SessionStoreSyncStateStore(sessions), executors, conversation });
 */
export class SessionStoreSyncStateStore implements SyncStateStore {
  readonly #sessions: SessionStore;

  constructor(sessions: SessionStore) {
    this.#sessions = sessions;
  }

  async load(sessionId: string): Promise<LedgerState | undefined> {
    const row = await this.#sessions.getSyncState(sessionId, LEDGER_SYNC_AGENT);
    if (row === undefined || row.cursor === null) return undefined;
    return parseLedgerState(row.cursor, `session store#${sessionId}/${LEDGER_SYNC_AGENT}`);
  }

  async save(sessionId: string, state: LedgerState): Promise<void> {
    const checked = parseLedgerState(state, `ledger state to save for session ${sessionId}`);
    if (LEDGER_SYNC_AGENT in checked.cursors || LEDGER_SYNC_AGENT in checked.executorSessionIds) {
      throw new ValidationError(`"${LEDGER_SYNC_AGENT}" is reserved for the ledger row; rename that agent`);
    }
    await this.#requireSession(sessionId);
    const previous = await this.#previousAgents(sessionId);
    const agents = new Set([...Object.keys(checked.cursors), ...Object.keys(checked.executorSessionIds)]);
    for (const agent of [...agents].sort()) {
      await this.#sessions.setSyncState(
        sessionId,
        agent,
        checked.cursors[agent] ?? 0,
        checked.executorSessionIds[agent],
      );
    }
    for (const agent of previous) {
      if (!agents.has(agent)) await this.#sessions.setSyncState(sessionId, agent, null);
    }
    await this.#sessions.setSyncState(sessionId, LEDGER_SYNC_AGENT, toJson(checked));
  }

  async delete(sessionId: string): Promise<boolean> {
    if ((await this.#sessions.getSession(sessionId)) === undefined) return false;
    const row = await this.#sessions.getSyncState(sessionId, LEDGER_SYNC_AGENT);
    if (row === undefined || row.cursor === null) return false;
    // Ledger row first: once it is null the state is gone, whatever happens to the mirrors.
    await this.#sessions.setSyncState(sessionId, LEDGER_SYNC_AGENT, null);
    for (const agent of agentsOf(row.cursor)) await this.#sessions.setSyncState(sessionId, agent, null);
    return true;
  }

  async #requireSession(sessionId: string): Promise<void> {
    if ((await this.#sessions.getSession(sessionId)) === undefined) {
      throw new NotFoundError("session", sessionId, MISSING_HINT);
    }
  }

  /** Agents mirrored by the stored ledger row (none when it is absent, cleared or unreadable). */
  async #previousAgents(sessionId: string): Promise<string[]> {
    const row = await this.#sessions.getSyncState(sessionId, LEDGER_SYNC_AGENT);
    return row === undefined ? [] : agentsOf(row.cursor);
  }
}

/** The agents named in a stored ledger row, read leniently (a row we cannot parse names none). */
function agentsOf(cursor: JsonValue): string[] {
  if (cursor === null || typeof cursor !== "object" || Array.isArray(cursor)) return [];
  const keys = (value: JsonValue | undefined): string[] =>
    value !== null && typeof value === "object" && !Array.isArray(value) ? Object.keys(value) : [];
  return [...new Set([...keys(cursor["cursors"]), ...keys(cursor["executorSessionIds"])])].filter(
    (agent) => agent !== LEDGER_SYNC_AGENT,
  );
}

/** A validated ledger state as plain JSON (it holds only strings, numbers, arrays and objects). */
function toJson(state: LedgerState): JsonValue {
  return JSON.parse(JSON.stringify(state)) as JsonValue;
}
