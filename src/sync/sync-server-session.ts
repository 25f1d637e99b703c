import { WriteQueue } from "../conversation/write-queue.ts";
import { ValidationError } from "../errors/errors.ts";
import { errorMessage, type LiveSession } from "./live-session.ts";
import { decodeClientMessage, type ClientMessage, type ServerMessage } from "./protocol.ts";
import type { SyncHub } from "./sync-hub.ts";

/**
 * One client connection to a sync server, independent of the transport: feed it the client's messages with
 * `handle`, and it answers through `send`. The first message must be `session_context` (resume) or `new_session`;
 * requests that follow run concurrently, except that each executor runs one intent at a time.
 *
 * @example
 * const connection = new SyncServerSession(hub, (message) => socket.send(JSON.stringify(message)));
 * socket.on("message", (data) => void connection.handle(String(data)));
 * socket.on("close", () => connection.close());
 */
export class SyncServerSession {
  readonly #hub: SyncHub;
  readonly #send: (message: ServerMessage) => void;
  readonly #order = new WriteQueue();
  readonly #running = new Set<Promise<void>>();
  #session: LiveSession | undefined;
  #unsubscribe: (() => void) | undefined;
  #closed = false;

  constructor(hub: SyncHub, send: (message: ServerMessage) => void) {
    this.#hub = hub;
    this.#send = (message) => {
      if (!this.#closed) send(message);
    };
  }

  /** The session this connection is attached to, once `session_context` or `new_session` was handled. */
  get session(): LiveSession | undefined {
    return this.#session;
  }

  /** Handles one raw text frame; malformed input is answered with an `error` message. */
  handle(raw: string): Promise<void> {
    let message: ClientMessage;
    try {
      message = decodeClientMessage(raw);
    } catch (error) {
      this.#send(errorMessage(undefined, error));
      return Promise.resolve();
    }
    return this.handleMessage(message);
  }

  /**
   * Handles one validated message. Resolves once it was dispatched — for requests, once they started; use
   * `settled()` to wait for their results.
   */
  handleMessage(message: ClientMessage): Promise<void> {
    return this.#order.run(async () => {
      if (message.type === "session_context" || message.type === "new_session") return this.#attach(message);
      const session = this.#session;
      if (!session) {
        this.#send(
          errorMessage(
            message.request_id,
            new ValidationError("no session yet; send session_context or new_session first"),
          ),
        );
        return;
      }
      const work = message.type === "conversation_request" ? session.chat(message) : session.intent(message);
      this.#running.add(work);
      void work.finally(() => this.#running.delete(work));
    });
  }

  /** Resolves when every request this connection started has finished. */
  async settled(): Promise<void> {
    await this.#order.run(() => undefined);
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  /** Detaches from the session; running requests go on and their results wait for the next connection. */
  close(): void {
    this.#closed = true;
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }

  async #attach(message: Extract<ClientMessage, { type: "session_context" | "new_session" }>): Promise<void> {
    try {
      const { session, restored } = await this.#hub.open(
        message.session_id,
        message.type === "new_session"
          ? { reset: true }
          : {
              ...(message.executor_session_ids !== undefined && {
                executorSessionIds: message.executor_session_ids,
              }),
              ...(message.backstory !== undefined && { backstory: message.backstory }),
            },
      );
      if (this.#closed) {
        session.release();
        return;
      }
      if (session !== this.#session) {
        this.#unsubscribe?.();
        this.#session = session;
        this.#unsubscribe = session.subscribe((outgoing) => this.#send(outgoing));
      }
      session.release();
      this.#send({
        type: "session_ready",
        session_id: session.sessionId,
        executor_session_ids: { ...session.ledger.toState().executorSessionIds },
        ledger_end: session.ledger.end,
        restored,
        in_flight: session.inFlight(),
      });
    } catch (error) {
      this.#send(errorMessage(undefined, error));
    }
  }
}
