/** The store's side of the SQLite writer thread: posts writes to it and resolves each once it is durable. */
import { Worker } from "node:worker_threads";
import { StoreError, ValidationError } from "../../errors/index.ts";
import {
  deserializeError,
  type WriterBlobMethod,
  type WriterEvent,
  type WriterMethod,
  type WriterOpenData,
  type WriterRequest,
} from "./sqlite-writer-protocol.ts";

/**
 * The writer thread's script beside this module: from src/ the .ts file (run by Node's type stripping); from the
 * built dist/ (or the CLI's bundle) the .js file.
 */
const DEFAULT_WRITER_SCRIPT = new URL(
  `./sqlite-writer-worker${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`,
  import.meta.url,
);

interface Pending {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
}

/**
 * A running writer thread. `call` posts one store write; it resolves with the method's result after the group
 * holding it committed (durable with `synchronous = FULL`), or rejects with the method's own error.
 */
export class SqliteWriterClient {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  readonly #idleWaiters: (() => void)[] = [];
  #nextId = 1;
  #lastGroup = 0;
  #stats = { writes: 0, groups: 0 };
  #failure: Error | undefined;
  #closing: Promise<void> | undefined;

  private constructor(worker: Worker) {
    this.#worker = worker;
  }

  /**
   * Starts the thread running `script` (a build of sqlite-writer-worker) and waits until it opened the database
   * (rejects with the open error otherwise).
   */
  static async start(
    data: WriterOpenData,
    script: string | URL = DEFAULT_WRITER_SCRIPT,
  ): Promise<SqliteWriterClient> {
    const cannotStart = (error: unknown) =>
      new StoreError(
        `${data.path}: the writer thread could not start ${String(script)} (${error instanceof Error ? error.message : String(error)}); ` +
          "writerScript must name ctxkit's sqlite-writer-worker.js (or a bundle of it)",
        false,
        { cause: error },
      );
    let worker: Worker;
    try {
      worker = new Worker(script, { workerData: data });
    } catch (error) {
      throw cannotStart(error);
    }
    const client = new SqliteWriterClient(worker);
    const exited = (code: number) => new StoreError(`${data.path}: the writer thread exited (${code})`);
    await new Promise<void>((resolve, reject) => {
      const settle = (error?: Error) => {
        worker.off("message", onMessage).off("error", onError).off("exit", onExit);
        if (error) reject(error);
        else resolve();
      };
      const onMessage = (event: WriterEvent) => {
        if (event.type === "ready") settle();
        else if (event.type === "open-failed") settle(deserializeError(event.error));
      };
      const onExit = (code: number) => settle(exited(code));
      // An error event before "ready" is the script failing to load or run, not the database failing to open
      // (that arrives as "open-failed").
      const onError = (error: Error) => settle(cannotStart(error));
      worker.on("message", onMessage).on("error", onError).on("exit", onExit);
    }).catch(async (error: unknown) => {
      await worker.terminate();
      throw error;
    });
    worker.on("message", (event: WriterEvent) => client.#receive(event));
    worker.on("error", (error) => client.#fail(error));
    worker.on("exit", (code) => client.#fail(exited(code)));
    worker.unref();
    return client;
  }

  /** Runs one store write in the writer thread; `now` is the caller's clock reading for its timestamps. */
  call<T>(method: WriterMethod | WriterBlobMethod, args: readonly unknown[], now: Date): Promise<T> {
    return this.#post(method, args, now) as Promise<T>;
  }

  /** How many writes were answered, and in how many groups (transactions) they were committed. */
  get stats(): { readonly writes: number; readonly groups: number } {
    return { ...this.#stats };
  }

  /** Resolves once every write posted so far has been answered. */
  idle(): Promise<void> {
    if (this.#pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Lets the queued writes finish, then closes the thread's connection and ends the thread (idempotent). */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#failure === undefined) await this.#post("close", [], new Date());
      await this.#worker.terminate();
    })();
    return this.#closing;
  }

  #post(
    method: WriterMethod | WriterBlobMethod | "close",
    args: readonly unknown[],
    now: Date,
  ): Promise<unknown> {
    if (this.#failure) return Promise.reject(this.#failure);
    if (this.#closing && method !== "close") {
      return Promise.reject(new StoreError("the store is closed; open it again"));
    }
    const id = this.#nextId++;
    const request: WriterRequest = { id, method, args, now: now.getTime() };
    return new Promise((resolve, reject) => {
      try {
        this.#worker.postMessage(request);
      } catch (error) {
        // Only plain data crosses to the writer thread (e.g. no functions in metadata).
        reject(
          new ValidationError(`cannot store this ${method} input: ${String(error)}`, [], { cause: error }),
        );
        return;
      }
      if (this.#pending.size === 0) this.#worker.ref();
      this.#pending.set(id, { resolve, reject });
    });
  }

  #receive(event: WriterEvent): void {
    if (event.type !== "reply") return;
    const pending = this.#pending.get(event.id);
    if (!pending) return;
    this.#pending.delete(event.id);
    this.#stats.writes++;
    if (event.group !== this.#lastGroup) {
      this.#lastGroup = event.group;
      this.#stats.groups++;
    }
    if (event.ok) pending.resolve(event.value);
    else pending.reject(deserializeError(event.error));
    if (this.#pending.size === 0) this.#settled();
  }

  #fail(error: Error): void {
    if (this.#closing && this.#pending.size === 0) return;
    const detail = error.message;
    this.#failure ??= new StoreError(`${detail}; the store cannot write any more: open it again`, false, {
      cause: error,
    });
    // The thread may have committed a write and stopped before answering it.
    const inFlight = new StoreError(
      `${detail}; this write may or may not be stored: read the session again before retrying it`,
      false,
      { cause: error },
    );
    for (const pending of this.#pending.values()) pending.reject(inFlight);
    this.#pending.clear();
    this.#settled();
  }

  #settled(): void {
    this.#worker.unref();
    for (const wake of this.#idleWaiters.splice(0)) wake();
  }
}
