import {
  createContextEngine,
  type ContextEngine,
  type ContextEngineOptions,
} from "../../engine/context-engine.ts";
import type { EngineSession } from "../../engine/engine-session.ts";
import type { PreparedRequest } from "../../engine/prepared-request.ts";
import type { GovernanceEvent } from "../../governance/events.ts";
import { createEngineMemory } from "../../engine/create-engine-memory.ts";
import type { MemoryStore } from "../../memory/memory-store.ts";
import type { SessionStore } from "../../store/session-store.ts";
import { counterForModel } from "../../tokens/counter-for-model.ts";
import { defaultModelRegistry } from "../../tokens/model-registry.ts";
import { KeyedMutex } from "./keyed-mutex.ts";
import { publicSessionId } from "./tenant-session-id.ts";
import { waitForTurnLock, type TurnLocks } from "./turn-locks.ts";

/** Engine options the server lets a deployment choose (the store, owner, event hook and recall are the server's). */
export type ServerEngineOptions = Omit<ContextEngineOptions, "store" | "session" | "onEvent" | "recall">;

/** What the server remembers about a live session between requests (lost on restart, by design). */
export interface SessionMemo {
  /** The last system prompt a request gave, reused when a request has none. */
  system?: string;
  /** The last request sent upstream, for `GET /context`. */
  lastRequest?: { readonly prepared: PreparedRequest; readonly at: string };
}

/** Exclusive use of one session until `release()`. */
export interface SessionLease {
  readonly engine: ContextEngine;
  readonly session: EngineSession;
  readonly memo: SessionMemo;
  /** Drops the session's in-memory state so its next use reloads what the store holds (after a failure). */
  discard(): void;
  release(): void;
}

/** Options of `TenantEngines`. */
export interface TenantEnginesOptions {
  readonly store: SessionStore;
  /** Engine options, the same for every tenant or chosen per tenant. */
  readonly engine?: ServerEngineOptions | ((tenant: string) => ServerEngineOptions);
  readonly onEvent?: (tenant: string, sessionId: string, event: GovernanceEvent) => void;
  /** Sessions kept loaded in memory; the least recently used idle one is unloaded beyond it. Default 1,000. */
  readonly maxLiveSessions?: number;
  /**
   * Long-term memory in context: each tenant's engine stores governance's summaries as its memories and puts
   * its core memories in every system prompt. Off unless given.
   */
  readonly contextMemory?: MemoryStore;
  /**
   * Serialise each session's turns across the servers sharing the database too (`PostgresTurnLocks`): a turn
   * waits for another server's turn on the session to end, so it starts from that turn's reply, and two turns never
   * both call the model for one session head. Without it only this process's turns are serialised.
   */
  readonly turnLocks?: TurnLocks;
}

async function withTenantMemory(
  options: ServerEngineOptions,
  tenant: string,
  store: MemoryStore | undefined,
): Promise<ServerEngineOptions> {
  if (store === undefined || options.memory !== undefined) return options;
  const model = options.model;
  const modelId = model === undefined ? "gpt-4.1" : typeof model === "string" ? model : model.modelId;
  const counter = options.tokenCounter ?? (await counterForModel(defaultModelRegistry.lookup(modelId)));
  return { ...options, tokenCounter: counter, memory: createEngineMemory({ store, counter, owner: tenant }) };
}

/**
 * One context engine per tenant (its sessions are created with `owner` = the tenant), session leases that
 * serialise requests on a session, and a bound on the sessions kept in memory.
 *
 * @example
 * const lease = await engines.lease("acme", "ses_1");
 * try { await lease.session.addUser("hi"); } finally { lease.release(); }
 */
export class TenantEngines {
  readonly #options: TenantEnginesOptions;
  readonly #engines = new Map<string, Promise<ContextEngine>>();
  readonly #ready = new Map<string, ContextEngine>();
  readonly #locks = new KeyedMutex();
  /** Live sessions in least-recently-used order. */
  readonly #live = new Map<string, { tenant: string; memo: SessionMemo }>();

  constructor(options: TenantEnginesOptions) {
    this.#options = options;
  }

  /** The tenant's engine (created on first use). */
  engine(tenant: string): Promise<ContextEngine> {
    let engine = this.#engines.get(tenant);
    if (engine === undefined) {
      const configured = this.#options.engine;
      const options = typeof configured === "function" ? configured(tenant) : (configured ?? {});
      engine = withTenantMemory(options, tenant, this.#options.contextMemory).then((resolved) =>
        createContextEngine({
          ...resolved,
          store: this.#options.store,
          session: { owner: tenant },
          // The proxy's clients run their own tools: they have no recall_tool_output.
          recall: false,
          onEvent: (event, sessionId) => this.#options.onEvent?.(tenant, sessionId, event),
        }),
      );
      void engine.then(
        (created) => this.#ready.set(tenant, created),
        () => this.#engines.delete(tenant),
      );
      this.#engines.set(tenant, engine);
    }
    return engine;
  }

  /** Waits for exclusive use of a session (callers check ownership first). */
  async lease(tenant: string, sessionId: string): Promise<SessionLease> {
    const engine = await this.engine(tenant);
    const unlock = await this.#locks.acquire(sessionId);
    let entry = this.#live.get(sessionId);
    if (entry !== undefined && entry.tenant !== tenant) {
      // The id was another tenant's session (deleted since, through another server): nothing of it carries over.
      this.#ready.get(entry.tenant)?.release(sessionId);
      entry = undefined;
    }
    entry ??= { tenant, memo: {} };
    this.#live.delete(sessionId);
    this.#live.set(sessionId, entry);
    this.#evict();
    let session = engine.session(sessionId);
    let unlockTurn = () => {};
    try {
      const locks = this.#options.turnLocks;
      if (locks !== undefined) {
        unlockTurn = await waitForTurnLock(locks, sessionId, publicSessionId(tenant, sessionId));
      }
      // Another server on the same database may have moved the session on since this one loaded it: the turn
      // starts from what the store holds, never from a stale view (whose commit would be refused after the call).
      if (await session.isBehindStore()) {
        engine.release(sessionId);
        session = engine.session(sessionId);
      }
    } catch (error) {
      unlockTurn();
      unlock();
      throw error;
    }
    let released = false;
    return {
      engine,
      session,
      memo: entry.memo,
      discard: () => engine.release(sessionId),
      release: () => {
        if (released) return;
        released = true;
        unlockTurn();
        unlock();
        this.#evict();
      },
    };
  }

  /** Runs `task` with a lease, released when it settles. */
  async withSession<T>(
    tenant: string,
    sessionId: string,
    task: (lease: SessionLease) => Promise<T>,
  ): Promise<T> {
    const lease = await this.lease(tenant, sessionId);
    try {
      return await task(lease);
    } finally {
      lease.release();
    }
  }

  /** The memo of a live session, if loaded. */
  memo(sessionId: string): SessionMemo | undefined {
    return this.#live.get(sessionId)?.memo;
  }

  /** Unloads a session (after it was deleted). Call it while holding its lease. */
  async forget(tenant: string, sessionId: string): Promise<void> {
    (await this.engine(tenant)).release(sessionId);
    this.#live.delete(sessionId);
  }

  #evict(): void {
    const limit = this.#options.maxLiveSessions ?? 1_000;
    if (this.#live.size <= limit) return;
    for (const [sessionId, entry] of this.#live) {
      if (this.#live.size <= limit) break;
      if (this.#locks.isBusy(sessionId)) continue;
      this.#live.delete(sessionId);
      this.#ready.get(entry.tenant)?.release(sessionId);
    }
  }
}
