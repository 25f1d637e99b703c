import { z } from "zod";
import { InterruptedError } from "../errors/errors.ts";
import { validate } from "../model/schemas.ts";
import { ConversationLedger } from "./conversation-ledger.ts";
import type { LedgerEntry } from "./ledger-entry.ts";
import { emptyLedgerState, type LedgerState } from "./ledger-state.ts";
import { LiveSession } from "./live-session.ts";
import type { SyncHubOptions } from "./sync-hub-options.ts";

/** How a connection asks for a session. */
export interface OpenSessionRequest {
  /** Start over (`new_session`) instead of resuming (`session_context`). */
  readonly reset?: boolean;
  /** Executor session ids the client knows (adopted for agents the server has none for). */
  readonly executorSessionIds?: Readonly<Record<string, string>>;
  /** The conversation as the client knows it (used only when the server has nothing stored). */
  readonly backstory?: readonly LedgerEntry[];
}

const optionsSchema = z
  .object({
    executors: z
      .record(z.string().min(1), z.unknown())
      .refine((executors) => Object.keys(executors).length > 0, {
        message: "give at least one executor",
      }),
    defaultAgent: z.string().optional(),
    maxUndelivered: z.number().int().nonnegative().optional(),
    idleMs: z.number().int().nonnegative().optional(),
  })
  .refine((options) => options.defaultAgent === undefined || options.defaultAgent in options.executors, {
    message: "defaultAgent must name one of the executors",
  });

/**
 * Holds the sessions of a sync server in memory, one `LiveSession` per session id shared by every connection
 * that attaches to it, loaded from and saved to the `SyncStateStore`. A session leaves memory once no connection
 * is attached and nothing runs (after `idleMs` when results are still waiting for a connection).
 *
 * @example
 * const hub = new SyncHub({ store: new JsonFileSyncStateStore(file), executors: { desktop }, conversation });
 * const { session } = await hub.open("session-1", {});
 */
export class SyncHub {
  readonly options: SyncHubOptions;
  readonly #sessions = new Map<string, Promise<LiveSession>>();
  readonly #timers = new Map<string, NodeJS.Timeout>();

  constructor(options: SyncHubOptions) {
    validate(optionsSchema, options, "sync server options");
    this.options = options;
  }

  /** Sessions in memory now. */
  get liveCount(): number {
    return this.#sessions.size;
  }

  /**
   * The live session for `sessionId`: already in memory, loaded from the store, or new (from the backstory).
   * `restored` is true when the server already knew the session. The session is held for the caller, so it stays
   * the hub's while the caller attaches (the last other connection may close meanwhile): call `session.release()`
   * once subscribed, or to give up.
   */
  async open(
    sessionId: string,
    request: OpenSessionRequest,
  ): Promise<{ session: LiveSession; restored: boolean }> {
    for (;;) {
      clearTimeout(this.#timers.get(sessionId));
      this.#timers.delete(sessionId);
      let restored = true;
      let pending = this.#sessions.get(sessionId);
      if (!pending) {
        pending = this.#load(sessionId, request.backstory).then(({ session, known }) => {
          restored = known;
          return session;
        });
        this.#sessions.set(sessionId, pending);
        pending.catch(() => this.#sessions.delete(sessionId));
      }
      const session = await pending;
      // Forgotten while this call waited (its last connection closed): load it again, never keep a stray copy.
      if (this.#sessions.get(sessionId) !== pending) continue;
      session.hold();
      try {
        if (request.reset) await session.reset();
        else if (request.executorSessionIds) await session.adoptExecutorSessions(request.executorSessionIds);
      } catch (error) {
        session.release();
        throw error;
      }
      return { session, restored: restored && !request.reset };
    }
  }

  /** Aborts every running request and forgets the sessions in memory (their state is in the store). */
  async close(): Promise<void> {
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    const sessions = await Promise.allSettled(this.#sessions.values());
    for (const result of sessions) {
      if (result.status === "fulfilled")
        result.value.abortAll(new InterruptedError("the sync server is shutting down"));
    }
    this.#sessions.clear();
  }

  async #load(sessionId: string, backstory: readonly LedgerEntry[] | undefined) {
    const state = await this.options.store.load(sessionId);
    const fromBackstory: LedgerState | undefined =
      state === undefined && backstory !== undefined && backstory.length > 0
        ? { ...emptyLedgerState(), entries: backstory }
        : undefined;
    const initial = state ?? fromBackstory;
    const ledger = new ConversationLedger({
      ...this.options.ledger,
      ...(initial !== undefined && { state: initial }),
    });
    const session = new LiveSession(sessionId, ledger, this.options, (live) => this.#maybeEvict(live));
    return { session, known: state !== undefined };
  }

  #maybeEvict(session: LiveSession): void {
    if (session.idle) {
      this.#forget(session);
      return;
    }
    if (
      session.held ||
      session.listenerCount > 0 ||
      session.inFlight().length > 0 ||
      this.#timers.has(session.sessionId)
    )
      return;
    // Only undelivered results keep it: give a reconnecting client `idleMs` to collect them.
    const timer = setTimeout(() => {
      this.#timers.delete(session.sessionId);
      if (!session.held && session.listenerCount === 0 && session.inFlight().length === 0)
        this.#forget(session);
    }, this.options.idleMs ?? 300_000);
    timer.unref();
    this.#timers.set(session.sessionId, timer);
  }

  #forget(session: LiveSession): void {
    void this.#sessions.get(session.sessionId)?.then((current) => {
      if (
        current === session &&
        !session.held &&
        session.listenerCount === 0 &&
        session.inFlight().length === 0
      ) {
        this.#sessions.delete(session.sessionId);
      }
    });
  }
}
