/**
 * One lock per key: `acquire(key)` resolves, in arrival order, once every earlier holder of the key released
 * it. Keys with no holder and no waiter take no memory.
 *
 * @example
 * const release = await locks.acquire(sessionId);
 * try { await appendAndCommit(); } finally { release(); }
 */
export class KeyedMutex {
  readonly #tails = new Map<string, Promise<void>>();

  /** Waits for the key and returns the function that releases it (idempotent). */
  async acquire(key: string): Promise<() => void> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let unlock!: () => void;
    const current = new Promise<void>((resolve) => (unlock = resolve));
    const tail = previous.then(() => current);
    this.#tails.set(key, tail);
    await previous;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      unlock();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    };
  }

  /** True while someone holds or waits for `key`. */
  isBusy(key: string): boolean {
    return this.#tails.has(key);
  }
}
