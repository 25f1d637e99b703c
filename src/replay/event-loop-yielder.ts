/** Work allowed between two turns of the event loop in a long replay, in milliseconds. */
export const DEFAULT_YIELD_BUDGET_MS = 15;

/**
 * A function to await between the steps of long CPU-bound work (a replay of a big session): once `budgetMs` of
 * wall time have passed since the event loop last had a turn, it gives it one (timers, I/O, other requests of a
 * server), and costs nothing otherwise. Time is measured, not steps counted: a step may take a microsecond or
 * tens of milliseconds.
 *
 * @example
 * const breathe = eventLoopYielder();
 * for (const step of steps) { await breathe(); work(step); }
 */
export function eventLoopYielder(budgetMs: number = DEFAULT_YIELD_BUDGET_MS): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < budgetMs) return;
    await new Promise<void>((resolve) => {
      if (typeof setImmediate === "function") setImmediate(resolve);
      else setTimeout(resolve, 0);
    });
    since = performance.now();
  };
}
