/**
 * Runs async tasks one at a time, in the order they were queued. A failed task does not block the next.
 *
 * @example
 * const queue = new WriteQueue();
 * await Promise.all([queue.run(() => writeA()), queue.run(() => writeB())]); // A finishes before B starts
 */
export class WriteQueue {
  #tail: Promise<unknown> = Promise.resolve();

  /** Queues `task` and resolves with its result once every earlier task has settled. */
  run<T>(task: () => T | Promise<T>): Promise<T> {
    const result = this.#tail.then(task, task);
    this.#tail = result.catch(() => undefined);
    return result;
  }
}
