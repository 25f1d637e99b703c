import { z } from "zod";
import { WriteQueue } from "../conversation/write-queue.ts";
import { CtxkitError } from "../errors/ctxkit-error.ts";
import { InterruptedError, NotFoundError, UnsupportedError, ValidationError } from "../errors/errors.ts";
import { systemClock } from "../model/ids.ts";
import type { Message } from "../model/message.ts";
import { validate } from "../model/schemas.ts";
import type { ConversationLedger } from "./conversation-ledger.ts";
import { combineContext } from "./execution-context.ts";
import type { AgentResult } from "./executor.ts";
import type { ConversationRequestMessage, ServerMessage, UserIntentMessage } from "./protocol.ts";
import type { SyncHubOptions } from "./sync-hub-options.ts";
import { toolCallRecordSchema } from "./tool-summary.ts";

const agentResultSchema = z.object({
  answer: z.string(),
  toolSummary: z.array(toolCallRecordSchema),
  sessionId: z.string().min(1, "an executor must report its session id"),
});

type Listener = (message: ServerMessage) => void;

/** The wire form of an error, for the request that caused it. */
export function errorMessage(requestId: string | undefined, error: unknown): ServerMessage {
  const known = CtxkitError.isInstance(error);
  const message = error instanceof Error ? error.message : String(error);
  return {
    type: "error",
    ...(requestId !== undefined && { request_id: requestId }),
    code: known ? error.code : "agent_failed",
    message: message.slice(0, 1_000),
  };
}

/**
 * One session held in memory by a `SyncHub`, shared by every connection attached to it: the ledger, the
 * per-agent run queues, the executor sessions still to restore, and the results no connection has received yet.
 */
export class LiveSession {
  readonly sessionId: string;
  readonly #options: SyncHubOptions;
  readonly #ledger: ConversationLedger;
  readonly #writes = new WriteQueue();
  readonly #agentQueues = new Map<string, WriteQueue>();
  readonly #pendingRestore: Set<string>;
  readonly #listeners = new Set<Listener>();
  readonly #undelivered: ServerMessage[] = [];
  readonly #inFlight = new Map<string, AbortController>();
  readonly #onIdle: (session: LiveSession) => void;
  #generation = 0;
  /** Connections attaching to it (`SyncHub.open` until their `release()`): it must stay the hub's meanwhile. */
  #holds = 0;

  constructor(
    sessionId: string,
    ledger: ConversationLedger,
    options: SyncHubOptions,
    onIdle: (session: LiveSession) => void,
  ) {
    this.sessionId = sessionId;
    this.#ledger = ledger;
    this.#options = options;
    this.#onIdle = onIdle;
    this.#pendingRestore = new Set(Object.keys(ledger.toState().executorSessionIds));
  }

  /** The shared ledger (read it; write through the session). */
  get ledger(): ConversationLedger {
    return this.#ledger;
  }

  /** True while nothing is running, no connection is attached or attaching and no result is waiting. */
  get idle(): boolean {
    return (
      !this.held && this.#listeners.size === 0 && this.#inFlight.size === 0 && this.#undelivered.length === 0
    );
  }

  /** True while a connection is attaching to it (see `hold`). */
  get held(): boolean {
    return this.#holds > 0;
  }

  /** @internal Keeps it in its hub until `release()`: `SyncHub.open` holds it for the connection that opens it. */
  hold(): void {
    this.#holds++;
  }

  get hasUndelivered(): boolean {
    return this.#undelivered.length > 0;
  }

  get listenerCount(): number {
    return this.#listeners.size;
  }

  /** Ids of the requests still running. */
  inFlight(): string[] {
    return [...this.#inFlight.keys()];
  }

  /** Attaches a connection; results it missed while none was attached are replayed to it first. */
  subscribe(listener: Listener): () => void {
    for (const message of this.#undelivered.splice(0)) listener(message);
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
      this.#onIdle(this);
    };
  }

  /**
   * Ends the hold `SyncHub.open` took for its caller: call it once attached (after `subscribe`) or when giving
   * the attach up; the hub then forgets the session if nothing else keeps it.
   */
  release(): void {
    if (this.#holds > 0) this.#holds--;
    this.#onIdle(this);
  }

  /** Records executor session ids a client knows and the server does not; they are restored before use. */
  async adoptExecutorSessions(ids: Readonly<Record<string, string>>): Promise<void> {
    await this.#writes.run(async () => {
      let changed = false;
      for (const [agent, id] of Object.entries(ids)) {
        if (this.#ledger.executorSessionId(agent) !== undefined || !(agent in this.#options.executors))
          continue;
        this.#ledger.setExecutorSessionId(agent, id);
        this.#pendingRestore.add(agent);
        changed = true;
      }
      if (changed) await this.#save();
    });
  }

  /** "New session": aborts running requests, discards executor sessions, empties the ledger. */
  async reset(): Promise<void> {
    this.#generation++;
    for (const controller of this.#inFlight.values())
      controller.abort(new InterruptedError("a new session was started"));
    await this.#writes.run(async () => {
      const ids = this.#ledger.toState().executorSessionIds;
      for (const [agent, id] of Object.entries(ids)) await this.#options.discardExecutorSession?.(agent, id);
      this.#ledger.reset();
      this.#pendingRestore.clear();
      await this.#save();
    });
  }

  /** Aborts everything running (server shutdown). */
  abortAll(reason: Error): void {
    this.#generation++; // results that still arrive are not recorded: the server no longer owns the state
    for (const controller of this.#inFlight.values()) controller.abort(reason);
  }

  /** Answers a `conversation_request` with the conversation agent. */
  async chat(request: ConversationRequestMessage): Promise<void> {
    await this.#track(request.request_id, async (signal) => {
      const conversation = this.#options.conversation;
      if (!conversation) {
        throw new UnsupportedError("this server has no conversation agent; send user_intent instead");
      }
      const generation = this.#generation;
      const history = this.#ledger.toMessages(this.sessionId);
      const messages = [...history, this.#userMessage(history, request.text)];
      const reply = await conversation({
        messages,
        signal,
        emit: (delta) => this.#send({ type: "conversation_delta", request_id: request.request_id, delta }),
      });
      const calls = reply.toolCalls;
      this.#throwIfAbandoned(generation);
      if (calls.length === 0) {
        await this.#commit(() => this.#ledger.appendExchange(request.text, reply.text));
      }
      this.#throwIfAbandoned(generation);
      const route = calls.length === 0 ? undefined : this.#route(calls[0]!.name);
      this.#send({
        type: "conversation_response",
        request_id: request.request_id,
        text: reply.text,
        tool_calls: [...calls],
        ...(route !== undefined && { route }),
      });
    });
  }

  /** Runs a `user_intent` on its executor with the context its session has not seen, then records the result. */
  async intent(intent: UserIntentMessage): Promise<void> {
    const agent = intent.agent ?? this.#defaultAgent();
    await this.#track(intent.request_id, async (signal) => {
      const executor = this.#options.executors[agent];
      if (!executor) {
        throw new NotFoundError(
          "agent",
          agent,
          `known agents: ${Object.keys(this.#options.executors).join(", ")}`,
        );
      }
      const queue = this.#agentQueues.get(agent) ?? new WriteQueue();
      this.#agentQueues.set(agent, queue);
      // One run at a time per agent: its session must see each exchange before the next one starts.
      await queue.run(async () => {
        signal.throwIfAborted();
        const generation = this.#generation;
        const restored = await this.#restore(agent);
        const context = this.#ledger.contextFor(agent, intent.text);
        const given = intent.conversation_context;
        const result: AgentResult = validate(
          agentResultSchema,
          await executor(intent.text, {
            agent,
            executorSessionId: this.#ledger.executorSessionId(agent),
            restored,
            message: given === undefined ? context.message : combineContext(given, intent.text),
            context: given ?? context.context,
            signal,
            emit: (delta) => this.#send({ type: "agent_delta", request_id: intent.request_id, delta }),
          }),
          `result of executor "${agent}"`,
        );
        this.#throwIfAbandoned(generation);
        await this.#commit(() =>
          this.#ledger.recordResult(agent, {
            request: intent.text,
            answer: result.answer,
            toolCalls: result.toolSummary,
            executorSessionId: result.sessionId,
            seenUpTo: context.to,
          }),
        );
        this.#throwIfAbandoned(generation);
        this.#send({
          type: "agent_result",
          request_id: intent.request_id,
          agent,
          answer: result.answer,
          tool_summary: [...result.toolSummary],
          session_id: result.sessionId,
        });
      });
    });
  }

  /**
   * A result that arrives after "new session" (or shutdown) belongs to a conversation that no longer exists: it
   * is neither recorded nor delivered (a client would add it to the new conversation), only reported.
   */
  #throwIfAbandoned(generation: number): void {
    if (generation !== this.#generation) {
      throw new InterruptedError("a new session was started; this request's result was discarded");
    }
  }

  async #restore(agent: string): Promise<boolean> {
    const id = this.#ledger.executorSessionId(agent);
    if (!this.#pendingRestore.delete(agent) || id === undefined) return false;
    if (!this.#options.restoreExecutorSession) return true;
    try {
      await this.#options.restoreExecutorSession(agent, id);
      return true;
    } catch {
      // The session is gone: start the agent over so its next context covers the whole window.
      await this.#writes.run(async () => {
        this.#ledger.resetAgent(agent);
        await this.#save();
      });
      return false;
    }
  }

  async #track(requestId: string, work: (signal: AbortSignal) => Promise<void>): Promise<void> {
    if (this.#inFlight.has(requestId)) {
      this.#send(
        errorMessage(
          requestId,
          new ValidationError(`request ${requestId} is already running; use a new request_id`),
        ),
      );
      return;
    }
    const controller = new AbortController();
    this.#inFlight.set(requestId, controller);
    try {
      await work(controller.signal);
    } catch (error) {
      this.#send(errorMessage(requestId, error));
    } finally {
      this.#inFlight.delete(requestId);
      this.#onIdle(this);
    }
  }

  #send(message: ServerMessage): void {
    if (this.#listeners.size > 0) {
      for (const listener of this.#listeners) listener(message);
      return;
    }
    // Deltas are only useful live; final messages wait for the next connection.
    if (message.type === "conversation_delta" || message.type === "agent_delta") return;
    this.#undelivered.push(message);
    const limit = this.#options.maxUndelivered ?? 50;
    if (this.#undelivered.length > limit) this.#undelivered.splice(0, this.#undelivered.length - limit);
  }

  #defaultAgent(): string {
    return this.#options.defaultAgent ?? Object.keys(this.#options.executors)[0] ?? "";
  }

  #route(toolName: string): string {
    const routed = this.#options.routes?.[toolName];
    if (routed !== undefined) return routed;
    return toolName in this.#options.executors ? toolName : this.#defaultAgent();
  }

  #userMessage(history: readonly Message[], text: string): Message {
    const last = history.at(-1);
    const clock = this.#options.ledger?.clock ?? systemClock;
    return Object.freeze({
      id: `${this.sessionId}_ledger_${this.#ledger.end}`,
      sessionId: this.sessionId,
      seq: this.#ledger.end,
      turn: (last?.turn ?? 0) + 1,
      role: "user",
      content: [{ type: "text" as const, text }],
      createdAt: clock().toISOString(),
    });
  }

  /**
   * Applies a change to the ledger and saves it, in the write queue. A save that fails puts the ledger back, so
   * the client's retry records the exchange once.
   */
  #commit(change: () => void): Promise<void> {
    return this.#writes.run(async () => {
      const before = this.#ledger.toState();
      change();
      try {
        await this.#save();
      } catch (error) {
        this.#ledger.restore(before);
        throw error;
      }
    });
  }

  #save(): Promise<void> {
    return this.#options.store.save(this.sessionId, this.#ledger.toState());
  }
}
