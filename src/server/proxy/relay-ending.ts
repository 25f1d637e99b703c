/**
 * How a relayed stream ends, the same for every format. The request fails at most once (`fail`), never after its
 * reply was stored. A client that goes away while the reply is being stored does not fail the request: its
 * `cancel` waits for the store to settle, so the session's lease and claim are released only after the commit
 * (a retry then sees the committed turn, or nothing when the commit failed). Once the client is gone nothing
 * more is sent to it.
 *
 * @example
 * const ending = new RelayEnding(controller, options.fail);
 * if (await ending.store(() => options.complete(reply))) ending.finish(doneEvent);
 */
export class RelayEnding {
  readonly #fail: (reason: unknown) => void;
  #controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  #settled = false;
  #gone = false;
  /** Settles when the reply's store settles; set once storing started. */
  #storing: Promise<void> | undefined;

  constructor(fail: (reason: unknown) => void) {
    this.#fail = fail;
  }

  /** The stream's controller, once the stream started. */
  attach(controller: ReadableStreamDefaultController<Uint8Array>): void {
    this.#controller = controller;
  }

  /** True once the client went away (the stream was cancelled). */
  get gone(): boolean {
    return this.#gone;
  }

  /** Fails the request (once; not after its reply was stored). */
  fail(reason: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#fail(reason);
  }

  /**
   * Stores the reply with `complete`: true when it was stored; false when storing failed, after failing the
   * request with the error and sending `errorEvent(error)` (built even when the client is gone, so the failure
   * is still reported). A request that already failed (the client went away first) stores nothing: false.
   */
  async store(
    complete: () => Promise<unknown>,
    errorEvent: (reason: unknown) => Uint8Array,
  ): Promise<boolean> {
    if (this.#settled) return false;
    // Through an async function, so a `complete` that throws at once rejects like one that fails later.
    const storing = (async () => complete())();
    this.#storing = storing.then(
      () => undefined,
      () => undefined,
    );
    try {
      await storing;
      this.#settled = true;
      return true;
    } catch (error) {
      this.fail(error);
      this.finish(errorEvent(error));
      return false;
    }
  }

  /** Sends `bytes` to the client, unless it is gone. */
  send(bytes: Uint8Array): void {
    if (!this.#gone) this.#controller?.enqueue(bytes);
  }

  /** Sends the last event (when given) and closes the stream, unless the client is gone. */
  finish(last?: Uint8Array): void {
    if (this.#gone) return;
    if (last !== undefined) this.#controller?.enqueue(last);
    this.#controller?.close();
  }

  /**
   * The client went away. Before the reply is being stored, the request fails; while it is, the store is waited
   * for instead (its own outcome settles the request).
   */
  cancel(reason: unknown): Promise<void> {
    this.#gone = true;
    if (this.#storing !== undefined) return this.#storing;
    this.fail(reason);
    return Promise.resolve();
  }
}
