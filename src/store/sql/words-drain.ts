/**
 * When a store indexes the words of the messages its writes queued. Appends never index words in their own
 * transaction: they leave the rows waiting (durably, committed with the turn: SQLite's rows past the
 * `message_words_state` mark, PostgreSQL's `message_words_queue`) and the drain indexes them afterwards, in
 * transactions of its own, a batch at a time: at once when a batch is waiting, otherwise `delayMs` after the
 * first write that left rows waiting, and everything at open (a process killed before its drain left rows
 * waiting) and at close. Search matches the waiting rows itself, so results never lag; only the index does, by
 * at most about `delayMs` plus one batch while the process runs.
 */

/** Rows a drain transaction indexes at most, and the backlog that starts a drain at once. */
export const WORDS_BATCH = 256;
/** How long rows may wait before a drain indexes them (search finds them meanwhile all the same). */
export const WORDS_DELAY_MS = 250;

/** How a drain runs one batch. */
export interface WordsDrainOptions {
  /** Indexes up to `limit` waiting rows in a transaction of its own; resolves with the number it indexed. */
  readonly indexBatch: (limit: number) => Promise<number>;
  /** False while a drain must not start (SQLite: inside the writer thread's group transaction). */
  readonly canRun?: () => boolean;
  /**
   * True where one writer does everything (SQLite): `drainDue` then drains before the next write when a batch
   * waits, so a writer that never yields to its event loop still keeps the backlog bounded. Otherwise the
   * drain runs beside the writes and `drainDue` does nothing.
   */
  readonly catchUp?: boolean;
  readonly delayMs?: number;
  readonly batch?: number;
}

/**
 * The drain of one store's waiting message words.
 *
 * @example
 * const drain = new WordsDrain({ indexBatch: (limit) => database.write((queries) => index(queries, limit)) });
 * drain.noteWritten(3); // after a commit that queued three rows
 */
export class WordsDrain {
  readonly #options: Required<WordsDrainOptions>;
  /** Rows this store queued since its last drain (a lower bound of what waits: other processes queue too). */
  #waiting = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<void> | undefined;
  #closed = false;

  constructor(options: WordsDrainOptions) {
    this.#options = {
      canRun: () => true,
      catchUp: false,
      delayMs: WORDS_DELAY_MS,
      batch: WORDS_BATCH,
      ...options,
    };
  }

  /** True once a batch or more waits: the writer drains before its next write. */
  get due(): boolean {
    return this.#waiting >= this.#options.batch;
  }

  /** Records `rows` queued by a write that committed (or will commit with its group); schedules the drain. */
  noteWritten(rows: number): void {
    if (rows <= 0 || this.#closed) return;
    this.#waiting += rows;
    if (this.due) this.#schedule(0);
    else this.#schedule(this.#options.delayMs);
  }

  /**
   * Drains now when a batch waits (the writer's catch-up between two writes); otherwise does nothing. A failure
   * does not fail the write about to run: the rows stay queued and the drain is tried again later.
   */
  async drainDue(): Promise<void> {
    if (this.#options.catchUp && this.due && this.#options.canRun()) await this.flush().catch(() => {});
  }

  /** Indexes everything waiting now, this store's rows and any other's (open, close, tests). */
  flush(): Promise<void> {
    // After a drain under way (it may have started before the latest rows were queued).
    const drain: Promise<void> = (this.#running ?? Promise.resolve())
      .catch(() => {})
      .then(() => this.#drain())
      .finally(() => {
        if (this.#running === drain) this.#running = undefined;
      });
    this.#running = drain;
    return drain;
  }

  /** Starts a flush without waiting for it (at open, on the timer); a failure is retried later. */
  flushInBackground(): void {
    this.flush().catch(() => {});
  }

  /** Stops scheduling; indexes what waits one last time (a failure leaves the rows queued for the next open). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#clearTimer();
    await this.#running?.catch(() => {});
    await this.flush().catch(() => {});
    this.#closed = true;
  }

  #schedule(delayMs: number): void {
    if (this.#timer !== undefined && delayMs > 0) return;
    this.#clearTimer();
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (!this.#options.canRun()) return this.#schedule(this.#options.delayMs);
      this.flushInBackground();
    }, delayMs);
    this.#timer.unref();
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  async #drain(): Promise<void> {
    this.#clearTimer();
    this.#waiting = 0;
    try {
      while ((await this.#options.indexBatch(this.#options.batch)) > 0);
    } catch (error) {
      // The rows stay queued (search finds them all the same): try again later, and at the next open.
      if (!this.#closed) this.#schedule(this.#options.delayMs * 4);
      throw error;
    }
  }
}
