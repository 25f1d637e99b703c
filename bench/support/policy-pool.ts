// Policy replays spread over worker threads: each job replays one policy over one session at one window, and the
// sessions are independent, so the section's wall time divides by the cores. Each worker loads (and tokenises)
// only the transcript files its jobs name, once.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import type { BenchPreset } from "../policies/index.ts";
import type { BenchProvider, PolicyRun } from "./policy-runs.ts";

/** One replay: a policy of `benchPolicies` by name, or ctxkit's default with `policy` set, over one session. */
export interface PolicyJob {
  /** The session: its name in the corpus and its position among that file's main conversations. */
  readonly session: string;
  readonly conversation: number;
  /** A policy of `benchPolicies` by name; with `preset`, ctxkit's governor with that preset (a variant). */
  readonly policyName: string;
  readonly preset?: BenchPreset;
  readonly window: number;
  /** See `RunOptions.fixedRoom`. */
  readonly fixedRoom: number;
  readonly asRun: boolean;
  /** Work estimate (the session's tokens), to start the longest first. */
  readonly weight: number;
}

export type JobResult = Record<BenchProvider, PolicyRun>;

/** Workers to use: `BENCH_WORKERS`, else every core the process may use. */
export function workerCount(): number {
  const configured = Number(process.env["BENCH_WORKERS"]);
  return Number.isInteger(configured) && configured > 0 ? configured : availableParallelism();
}

/**
 * Runs `jobs` on `workerCount()` worker threads, longest first, and returns their results in the jobs' order.
 * `onDone` reports progress.
 */
export async function runJobs(
  jobs: readonly PolicyJob[],
  onDone?: (job: PolicyJob, done: number) => void,
): Promise<JobResult[]> {
  const results: JobResult[] = Array.from({ length: jobs.length });
  // BENCH_CACHE (a directory) keeps each job's result by the job, for iterations on the tables: never set it
  // across a change of the code replayed.
  const cache = process.env["BENCH_CACHE"];
  const cached = (job: PolicyJob) =>
    cache === undefined
      ? undefined
      : join(
          cache,
          `${createHash("sha1")
            .update(JSON.stringify({ ...job, weight: 0 }))
            .digest("hex")}.json`,
        );
  const todo: number[] = [];
  for (const [index, job] of jobs.entries()) {
    const file = cached(job);
    if (file !== undefined && existsSync(file))
      results[index] = JSON.parse(readFileSync(file, "utf8")) as JobResult;
    else todo.push(index);
  }
  const order = todo.sort((a, b) => jobs[b]!.weight - jobs[a]!.weight);
  let next = 0;
  let done = 0;
  const workers = Math.max(1, Math.min(workerCount(), order.length));
  await Promise.all(
    Array.from({ length: workers }, async () => {
      const worker = new Worker(new URL("policy-worker.ts", import.meta.url));
      try {
        while (next < order.length) {
          const index = order[next++]!;
          results[index] = await new Promise<JobResult>((resolve, reject) => {
            const onMessage = (message: { result?: JobResult; error?: string }) => {
              worker.off("error", reject);
              if (message.error !== undefined) reject(new Error(message.error));
              else resolve(message.result!);
            };
            worker.once("message", onMessage);
            worker.once("error", reject);
            worker.postMessage(jobs[index]);
          });
          const file = cached(jobs[index]!);
          if (file !== undefined) writeFileSync(file, JSON.stringify(results[index]));
          onDone?.(jobs[index]!, ++done);
        }
      } finally {
        await worker.terminate();
      }
    }),
  );
  return results;
}
