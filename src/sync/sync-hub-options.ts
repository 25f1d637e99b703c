import type { ConversationLedgerOptions } from "./conversation-ledger.ts";
import type { ConversationResponder, Executor } from "./executor.ts";
import type { SyncStateStore } from "./sync-state-store.ts";

/** How a sync server runs its agents and keeps its state. */
export interface SyncHubOptions {
  /** Where each session's ledger, cursors and executor session ids persist. */
  readonly store: SyncStateStore;
  /** The execution agents, by name (e.g. `{ desktop }`). */
  readonly executors: Readonly<Record<string, Executor>>;
  /** The conversation agent; without it, `conversation_request` is refused. */
  readonly conversation?: ConversationResponder;
  /** Agent for intents that name none (default: the first executor). */
  readonly defaultAgent?: string;
  /** Agent to route each conversation tool to, by tool name (default: the agent of that name, else the default). */
  readonly routes?: Readonly<Record<string, string>>;
  /**
   * Reloads an executor session before its first use after a reconnect or restart (Contop's `restore_session`).
   * When it throws, the session counts as lost: the agent's next context covers the whole window again.
   */
  readonly restoreExecutorSession?: (agent: string, executorSessionId: string) => Promise<void>;
  /** Called for each executor session a `new_session` abandons. */
  readonly discardExecutorSession?: (agent: string, executorSessionId: string) => Promise<void>;
  /** Ledger settings: window size, speaker labels, tool-summary limits. */
  readonly ledger?: Omit<ConversationLedgerOptions, "state">;
  /** Results kept for a session with no connection, replayed when one attaches (default 50). */
  readonly maxUndelivered?: number;
  /** How long a session with undelivered results stays in memory with no connection (default 300 000 ms). */
  readonly idleMs?: number;
}
