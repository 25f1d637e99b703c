/**
 * Counting long texts on a thread of their own, so one request's huge text (megabytes of tool output take seconds to
 * tokenise exactly) does not slow every other request of the process: the event loop only waits for the answer.
 */
import { Worker } from "node:worker_threads";
import type { CountAnswer, CountRequest } from "./count-worker.ts";
import type { ExactEncoding } from "./tokenizer-family.ts";

/** Texts at least this long are counted on the counting thread (shorter ones take under a few milliseconds). */
export const WORKER_COUNT_FROM = 64 * 1024;

/** The thread's script beside this module: the .ts file from src/, the .js file from dist/ or a bundle. */
const SCRIPT = new URL(`./count-worker${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url);

interface Pending {
  readonly resolve: (count: number) => void;
  readonly reject: (error: Error) => void;
}

let worker: Worker | undefined;
/** Set once the thread could not start or failed: counting stays on the calling thread from then on. */
let unavailable = false;
const pending = new Map<number, Pending>();
let nextId = 1;

function failAll(error: Error): void {
  unavailable = true;
  worker = undefined;
  for (const waiting of pending.values()) waiting.reject(error);
  pending.clear();
}

function start(): Worker | undefined {
  if (worker !== undefined || unavailable) return worker;
  try {
    const started = new Worker(SCRIPT);
    started.on("message", (answer: CountAnswer) => {
      const waiting = pending.get(answer.id);
      if (waiting === undefined) return;
      pending.delete(answer.id);
      if ("count" in answer) waiting.resolve(answer.count);
      else waiting.reject(new Error(answer.error));
      if (pending.size === 0) started.unref();
    });
    started.on("error", (error) => failAll(error));
    started.on("exit", (code) => failAll(new Error(`the counting thread exited (${code})`)));
    started.unref();
    worker = started;
  } catch {
    unavailable = true;
  }
  return worker;
}

/**
 * The exact count of `text` under `encoding`, made on the counting thread (started on first use, kept while the
 * process runs, never keeping it alive); undefined when there is no such thread (its script is missing from a
 * bundle, it failed): the caller counts on its own thread then.
 *
 * @example
 * const count = (await countOnWorker("o200k_base", text)) ?? counter.countText(text);
 */
export async function countOnWorker(encoding: ExactEncoding, text: string): Promise<number | undefined> {
  const thread = start();
  if (thread === undefined) return undefined;
  const id = nextId++;
  const counted = new Promise<number>((resolve, reject) => pending.set(id, { resolve, reject }));
  thread.ref();
  thread.postMessage({ id, encoding, text } satisfies CountRequest);
  try {
    return await counted;
  } catch {
    return undefined;
  }
}
