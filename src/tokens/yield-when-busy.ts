/** Longest stretch of synchronous counting, in milliseconds, before counting lets the event loop run. */
export const SLICE_MS = 10;

let sliceStart = performance.now();

/**
 * Lets the event loop run (timers, sockets, other requests) when the work since the last yield took
 * `SLICE_MS` or more; resolves at once otherwise. Async counting calls it between bounded pieces of work, so
 * one huge request cannot stall a server for the others.
 *
 * @example
 * for (const piece of pieces) {
 *   total += countPiece(piece);
 *   await yieldWhenBusy();
 * }
 */
export async function yieldWhenBusy(): Promise<void> {
  if (performance.now() - sliceStart < SLICE_MS) return;
  await new Promise<void>((resolve) => setImmediate(resolve));
  sliceStart = performance.now();
}
