/**
 * The token-counting thread (see `worker-counting.ts`): counts the texts it is sent with the exact counter of
 * their encoding, one at a time, and answers each with its count or its failure.
 */
import { readlinkSync } from "node:fs";
import { constants, setPriority } from "node:os";
import { parentPort } from "node:worker_threads";
import { createExactCounter } from "./exact-counter.ts";
import type { ExactEncoding } from "./tokenizer-family.ts";

/** A text to count. */
export interface CountRequest {
  readonly id: number;
  readonly encoding: ExactEncoding;
  readonly text: string;
}

/** The count of a text, or why it could not be counted. */
export type CountAnswer =
  { readonly id: number; readonly count: number } | { readonly id: number; readonly error: string };

/**
 * Lowers this thread's scheduling priority to below normal (Linux: niceness is per thread, and `/proc/thread-self`
 * names this one), so that on a busy machine the event loop serving other requests runs first and a huge count
 * takes mostly spare CPU. Not the lowest: a request waits for this count, and at the lowest priority a saturated
 * machine starved it for over a minute (a CI run). Elsewhere, or without the right, the thread keeps the process's
 * priority.
 */
function yieldToTheEventLoop(): void {
  try {
    const threadId = Number(readlinkSync("/proc/thread-self").split("/").pop());
    if (Number.isInteger(threadId) && threadId > 0)
      setPriority(threadId, constants.priority.PRIORITY_BELOW_NORMAL);
  } catch {
    // Not Linux, or not allowed: counting still runs off the event loop.
  }
}

yieldToTheEventLoop();

parentPort?.on("message", (request: CountRequest) => {
  void createExactCounter(request.encoding).then(
    (counter) => parentPort!.postMessage({ id: request.id, count: counter.countText(request.text) }),
    (error: unknown) =>
      parentPort!.postMessage({
        id: request.id,
        error: error instanceof Error ? error.message : String(error),
      }),
  );
});
