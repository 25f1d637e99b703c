/**
 * The token-counting thread (see `worker-counting.ts`): counts the texts it is sent with the exact counter of
 * their encoding, one at a time, and answers each with its count or its failure.
 */
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
