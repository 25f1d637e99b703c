import { CtxkitError, type CtxkitErrorCode } from "../errors/ctxkit-error.ts";
import { randomIds } from "../model/ids.ts";
import type { LedgerEntry } from "./ledger-entry.ts";
import {
  KEY_SUBPROTOCOL_PREFIX,
  SYNC_SUBPROTOCOL,
  decodeServerMessage,
  type AgentResultMessage,
  type ClientMessage,
  type ConversationResponseMessage,
  type ConversationToolCall,
  type ServerMessage,
  type SessionReadyMessage,
} from "./protocol.ts";
import { formatToolSummary } from "./tool-summary.ts";

/** Connection state of a `SyncClient`. */
export type SyncClientStatus = "connecting" | "ready" | "reconnecting" | "closed";

/** Options of `new SyncClient()`. */
export interface SyncClientOptions {
  /** The endpoint, e.g. `ws://127.0.0.1:8080/sync`. */
  readonly url: string;
  /** Session to resume (default: a new random id). */
  readonly sessionId?: string;
  /** Executor session ids saved by the app from an earlier run, by agent. */
  readonly executorSessionIds?: Readonly<Record<string, string>>;
  /** The conversation saved by the app, replayed as backstory (the server uses it only if it has nothing). */
  readonly transcript?: readonly LedgerEntry[];
  /** Entries of the transcript kept for the backstory (default 200). */
  readonly maxTranscriptEntries?: number;
  /** Reconnection backoff: first delay, largest delay, attempts before giving up (default 250, 10 000, ∞). */
  readonly reconnect?: {
    readonly initialDelayMs?: number;
    readonly maxDelayMs?: number;
    readonly maxAttempts?: number;
  };
  readonly onStatus?: (status: SyncClientStatus) => void;
  /**
   * API key sent as the `ctxkit.key.<key>` subprotocol (browsers cannot set `Authorization` on a WebSocket).
   * The client always offers `ctxkit.sync` too, which the server selects.
   */
  readonly apiKey?: string;
  /** WebSocket implementation (default: the global one, Node ≥ 22 and browsers). */
  readonly WebSocket?: typeof WebSocket;
}

/** What `ask` led to: a direct answer, or an executor run the conversation agent asked for. */
export type AskOutcome =
  | { readonly kind: "chat"; readonly text: string }
  | {
      readonly kind: "agent";
      readonly toolCalls: readonly ConversationToolCall[];
      readonly result: AgentResultMessage;
    };

interface Pending {
  readonly message: Extract<ClientMessage, { request_id: string }>;
  readonly onDelta: ((delta: string) => void) | undefined;
  readonly resolve: (message: ServerMessage) => void;
  readonly reject: (error: Error) => void;
  sent: boolean;
}

function remoteError(code: string, message: string): CtxkitError {
  return new CtxkitError(code as CtxkitErrorCode, message);
}

/**
 * A client of the sync protocol. It reconnects on its own and, on every (re)connection, replays
 * `session_context` with its session id, executor session ids and transcript, so the server restores the executor
 * session before the next intent. Requests sent while disconnected wait for the connection; requests the server
 * lost (it restarted mid-run) are rejected with code `network_error`.
 *
 * @example
 * ```ts
 * const client = new SyncClient({ url: "ws://127.0.0.1:8080/sync", sessionId: saved.id, executorSessionIds: saved.executors });
 * await client.connect();
 * const outcome = await client.ask("Delete that passwords file", { onDelta: (text) => render(text) });
 * if (outcome.kind === "agent") console.log(outcome.result.tool_summary);
 * ```
 */
export class SyncClient {
  readonly #options: SyncClientOptions;
  readonly #pending = new Map<string, Pending>();
  readonly #readyWaiters: {
    resolve: (ready: SessionReadyMessage) => void;
    reject: (error: Error) => void;
  }[] = [];
  #sessionId: string;
  #executorSessionIds: Record<string, string>;
  #transcript: LedgerEntry[];
  #socket: WebSocket | undefined;
  #ready = false;
  #closed = false;
  #attempt = 0;
  #resetOnOpen = false;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: SyncClientOptions) {
    this.#options = options;
    this.#sessionId = options.sessionId ?? randomIds("ses");
    this.#executorSessionIds = { ...options.executorSessionIds };
    this.#transcript = [...(options.transcript ?? [])];
  }

  get sessionId(): string {
    return this.#sessionId;
  }

  /** Executor session ids by agent, as last reported by the server (save them with the session). */
  get executorSessionIds(): Readonly<Record<string, string>> {
    return { ...this.#executorSessionIds };
  }

  /** The conversation as this client saw it (save it to replay after an app restart). */
  get transcript(): readonly LedgerEntry[] {
    return this.#transcript;
  }

  /** Connects (or waits for the current connection) and resolves once the session is ready. */
  connect(): Promise<SessionReadyMessage> {
    if (this.#closed)
      return Promise.reject(remoteError("network_error", "the client was closed; create a new one"));
    const ready = new Promise<SessionReadyMessage>((resolve, reject) =>
      this.#readyWaiters.push({ resolve, reject }),
    );
    if (!this.#socket && this.#timer === undefined) this.#open();
    else if (this.#ready) this.#socket?.send(JSON.stringify(this.#sessionContext()));
    return ready;
  }

  /** Starts a new session (ledger, cursors and executor sessions reset on the server). */
  newSession(sessionId: string = randomIds("ses")): Promise<SessionReadyMessage> {
    this.#sessionId = sessionId;
    this.#executorSessionIds = {};
    this.#transcript = [];
    this.#resetOnOpen = true;
    const ready = new Promise<SessionReadyMessage>((resolve, reject) =>
      this.#readyWaiters.push({ resolve, reject }),
    );
    if (this.#ready) this.#socket?.send(JSON.stringify({ type: "new_session", session_id: sessionId }));
    else if (!this.#socket && this.#timer === undefined) this.#open();
    return ready;
  }

  /** Sends a message to the conversation agent. */
  async chat(
    text: string,
    options: { onDelta?: (delta: string) => void } = {},
  ): Promise<ConversationResponseMessage> {
    const request = { type: "conversation_request" as const, request_id: randomIds("req"), text };
    return (await this.#request(request, options.onDelta)) as ConversationResponseMessage;
  }

  /** Sends work straight to an executor; the server builds its context unless `conversationContext` is given. */
  async runIntent(
    text: string,
    options: { agent?: string; conversationContext?: string; onDelta?: (delta: string) => void } = {},
  ): Promise<AgentResultMessage> {
    const request = {
      type: "user_intent" as const,
      request_id: randomIds("req"),
      text,
      ...(options.agent !== undefined && { agent: options.agent }),
      ...(options.conversationContext !== undefined && { conversation_context: options.conversationContext }),
    };
    return (await this.#request(request, options.onDelta)) as AgentResultMessage;
  }

  /** The classification path: asks the conversation agent, and runs the executor it routes to when it asks. */
  async ask(text: string, options: { onDelta?: (delta: string) => void } = {}): Promise<AskOutcome> {
    const response = await this.chat(text, options);
    if (response.tool_calls.length === 0) return { kind: "chat", text: response.text };
    const result = await this.runIntent(text, {
      ...(response.route !== undefined && { agent: response.route }),
      ...options,
    });
    return { kind: "agent", toolCalls: response.tool_calls, result };
  }

  /** Closes the connection for good; unanswered requests are rejected. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#socket?.close();
    this.#failAll("the client was closed");
    this.#options.onStatus?.("closed");
  }

  #request(message: Pending["message"], onDelta: Pending["onDelta"]): Promise<ServerMessage> {
    if (this.#closed)
      return Promise.reject(remoteError("network_error", "the client was closed; create a new one"));
    return new Promise((resolve, reject) => {
      const pending: Pending = { message, onDelta, resolve, reject, sent: false };
      this.#pending.set(message.request_id, pending);
      if (this.#ready) this.#sendPending(pending);
      else if (!this.#socket && this.#timer === undefined) this.#open();
    });
  }

  #sendPending(pending: Pending): void {
    pending.sent = true;
    this.#socket?.send(JSON.stringify(pending.message));
  }

  #sessionContext(): ClientMessage {
    if (this.#resetOnOpen) return { type: "new_session", session_id: this.#sessionId };
    const keep = this.#options.maxTranscriptEntries ?? 200;
    return {
      type: "session_context",
      session_id: this.#sessionId,
      executor_session_ids: { ...this.#executorSessionIds },
      ...(this.#transcript.length > 0 && { backstory: this.#transcript.slice(-keep) }),
    };
  }

  #open(): void {
    this.#timer = undefined;
    this.#options.onStatus?.(this.#attempt === 0 ? "connecting" : "reconnecting");
    const Implementation = this.#options.WebSocket ?? globalThis.WebSocket;
    const protocols = [
      SYNC_SUBPROTOCOL,
      ...(this.#options.apiKey !== undefined ? [`${KEY_SUBPROTOCOL_PREFIX}${this.#options.apiKey}`] : []),
    ];
    const socket = new Implementation(this.#options.url, protocols);
    this.#socket = socket;
    socket.addEventListener("open", () => socket.send(JSON.stringify(this.#sessionContext())));
    socket.addEventListener("message", (event: MessageEvent) => {
      if (typeof event.data !== "string") return;
      let message: ServerMessage;
      try {
        message = decodeServerMessage(event.data);
      } catch {
        return; // not a sync server message; nothing it could answer
      }
      this.#receive(message);
    });
    socket.addEventListener("close", () => {
      if (this.#socket !== socket) return;
      this.#socket = undefined;
      this.#ready = false;
      if (!this.#closed) this.#scheduleReconnect();
    });
  }

  #scheduleReconnect(): void {
    const settings = this.#options.reconnect ?? {};
    if (this.#attempt >= (settings.maxAttempts ?? Number.POSITIVE_INFINITY)) {
      this.#closed = true;
      this.#failAll(
        `cannot reach ${this.#options.url} after ${this.#attempt} attempts; check the server and retry`,
      );
      this.#options.onStatus?.("closed");
      return;
    }
    const delay = Math.min(
      settings.maxDelayMs ?? 10_000,
      (settings.initialDelayMs ?? 250) * 2 ** this.#attempt,
    );
    this.#attempt++;
    this.#options.onStatus?.("reconnecting");
    this.#timer = setTimeout(() => this.#open(), delay);
  }

  #receive(message: ServerMessage): void {
    if (message.type === "session_ready") return this.#onReady(message);
    if (message.type === "error" && message.request_id === undefined) {
      for (const waiter of this.#readyWaiters.splice(0))
        waiter.reject(remoteError(message.code, message.message));
      return;
    }
    const pending = this.#pending.get(message.request_id!);
    if (!pending) return; // another connection's request, or one already given up on
    if (message.type === "conversation_delta" || message.type === "agent_delta")
      return pending.onDelta?.(message.delta);
    this.#pending.delete(message.request_id!);
    if (message.type === "error") return pending.reject(remoteError(message.code, message.message));
    this.#remember(pending, message);
    pending.resolve(message);
  }

  #onReady(message: SessionReadyMessage): void {
    if (message.session_id !== this.#sessionId) {
      // The session changed (newSession) while the previous one was being attached: attach the current one.
      this.#socket?.send(JSON.stringify(this.#sessionContext()));
      return;
    }
    this.#ready = true;
    this.#attempt = 0;
    this.#resetOnOpen = false;
    this.#executorSessionIds = { ...this.#executorSessionIds, ...message.executor_session_ids };
    for (const [id, pending] of this.#pending) {
      if (pending.sent && !message.in_flight.includes(id)) {
        this.#pending.delete(id);
        pending.reject(
          remoteError(
            "network_error",
            `the server lost request ${id} (the connection dropped or it restarted); send it again`,
          ),
        );
      }
    }
    for (const pending of this.#pending.values()) if (!pending.sent) this.#sendPending(pending);
    this.#options.onStatus?.("ready");
    for (const waiter of this.#readyWaiters.splice(0)) waiter.resolve(message);
  }

  #remember(pending: Pending, message: ServerMessage): void {
    const at = new Date().toISOString();
    const text = pending.message.text;
    if (message.type === "conversation_response" && message.tool_calls.length === 0) {
      this.#transcript.push({ role: "user", text, at }, { role: "assistant", text: message.text, at });
    }
    if (message.type === "agent_result") {
      this.#executorSessionIds = { ...this.#executorSessionIds, [message.agent]: message.session_id };
      const toolSummary = formatToolSummary(message.agent, message.tool_summary);
      this.#transcript.push(
        { role: "user", text, agent: message.agent, at },
        {
          role: "assistant",
          text: message.answer,
          agent: message.agent,
          at,
          ...(toolSummary !== undefined && { toolSummary }),
        },
      );
    }
    const keep = this.#options.maxTranscriptEntries ?? 200;
    if (this.#transcript.length > keep) this.#transcript = this.#transcript.slice(-keep);
  }

  #failAll(reason: string): void {
    for (const pending of this.#pending.values()) pending.reject(remoteError("network_error", reason));
    this.#pending.clear();
    for (const waiter of this.#readyWaiters.splice(0)) waiter.reject(remoteError("network_error", reason));
  }
}
