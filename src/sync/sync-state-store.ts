import type { LedgerState } from "./ledger-state.ts";
import { parseLedgerState } from "./ledger-state.ts";

/**
 * Where a sync server keeps each session's ledger, cursors and executor session ids, so a restart neither
 * forgets the executor sessions nor resends the whole conversation. Implementations must make `save` atomic:
 * a crash leaves the previous or the new state, never a mix.
 */
export interface SyncStateStore {
  /** The state saved for `sessionId`, or `undefined` when there is none. */
  load(sessionId: string): Promise<LedgerState | undefined>;
  /** Replaces the state of `sessionId`. */
  save(sessionId: string, state: LedgerState): Promise<void>;
  /** Forgets `sessionId`; false when it was unknown. */
  delete(sessionId: string): Promise<boolean>;
}

/**
 * A `SyncStateStore` in memory (tests, single-process servers that need no restart survival). States are
 * copied in and out, so callers can never change what is stored by mutating an object.
 *
 * @example
 * const store = new MemorySyncStateStore();
 * await store.save("s1", ledger.toState());
 * new ConversationLedger({ state: await store.load("s1") });
 */
export class MemorySyncStateStore implements SyncStateStore {
  readonly #states = new Map<string, string>();

  async load(sessionId: string): Promise<LedgerState | undefined> {
    const text = this.#states.get(sessionId);
    return text === undefined ? undefined : parseLedgerState(JSON.parse(text), `memory#${sessionId}`);
  }

  async save(sessionId: string, state: LedgerState): Promise<void> {
    this.#states.set(sessionId, JSON.stringify(state));
  }

  async delete(sessionId: string): Promise<boolean> {
    return this.#states.delete(sessionId);
  }
}
