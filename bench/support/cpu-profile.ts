// Reads the `.cpuprofile` files a process wrote with `node --cpu-prof` (one per thread) and sums their samples'
// time within a window of the machine's monotonic clock, by the function running and by the code of the checkout
// that called it.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** A V8 CPU profile as `--cpu-prof` writes it. */
interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: {
      readonly functionName: string;
      readonly url: string;
      readonly lineNumber: number;
    };
    readonly children?: readonly number[];
  }[];
  /** Microseconds of the monotonic clock (CLOCK_MONOTONIC on Linux, as `process.hrtime`). */
  readonly startTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Sampled time of one function (or V8's `(garbage collector)`, `(program)`) run on behalf of one file. */
export interface SampledTime {
  /** The thread: 0 the main one, then the worker threads in the order they started. */
  readonly thread: number;
  /** The function running: `name (file:line)`, its file relative to the checkout or a package's name. */
  readonly frame: string;
  /**
   * The checkout's source file (under `src/`) nearest to the running function on its stack: the code on whose
   * behalf it ran (Node's HTTP internals under `callUpstream` count for `src/server/upstream/call-upstream.ts`);
   * undefined when no checkout code is on the stack (the Node server parsing a request, the garbage collector).
   */
  readonly owner: string | undefined;
  readonly micros: number;
}

/** The current monotonic clock in microseconds, the clock of a profile's timestamps. */
export const monotonicMicros = (): number => Number(process.hrtime.bigint() / 1000n);

function shortUrl(url: string, checkout: string): string {
  const path = url.replace(/^file:\/\//, "");
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (modules) return modules[1]!;
  return path.startsWith(checkout) ? path.slice(checkout.length).replace(/^\//, "") : path;
}

/**
 * Sampled time of every profile in `folder` (the main thread's first: its file has the lowest thread number),
 * counting the samples taken between `fromMicros` and `toMicros`; `(idle)` is left out. A sample stands for the
 * time until the next one, so a thread descheduled by a busy machine is counted as running: compare shares, not
 * the sum with the CPU time the kernel counted.
 */
export function sampledTimes(
  folder: string,
  fromMicros: number,
  toMicros: number,
  checkout: string,
): SampledTime[] {
  const totals = new Map<string, SampledTime>();
  const files = readdirSync(folder)
    .filter((name) => name.endsWith(".cpuprofile"))
    // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile
    .sort((a, b) => Number(a.split(".")[4]) - Number(b.split(".")[4]));
  for (const [thread, file] of files.entries()) {
    const profile = JSON.parse(readFileSync(join(folder, file), "utf8")) as CpuProfile;
    const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
    const parents = new Map<number, number>();
    for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
    const ownerOf = new Map<number, string | undefined>();
    const owner = (id: number): string | undefined => {
      if (ownerOf.has(id)) return ownerOf.get(id);
      const url = shortUrl(nodes.get(id)!.callFrame.url, checkout);
      const parent = parents.get(id);
      const found = url.startsWith("src/") ? url : parent === undefined ? undefined : owner(parent);
      ownerOf.set(id, found);
      return found;
    };
    let at = profile.startTime;
    for (let index = 0; index < profile.samples.length; index++) {
      at += profile.timeDeltas[index] ?? 0;
      const span = profile.timeDeltas[index + 1] ?? 0;
      if (at < fromMicros || at > toMicros) continue;
      const id = profile.samples[index]!;
      const { functionName, url: raw, lineNumber } = nodes.get(id)!.callFrame;
      if (functionName === "(idle)") continue;
      const url = shortUrl(raw, checkout);
      const frame = url === "" ? functionName : `${functionName || "(anonymous)"} (${url}:${lineNumber + 1})`;
      const by = owner(id);
      const key = `${thread}\t${by}\t${frame}`;
      const found = totals.get(key);
      totals.set(key, { thread, frame, owner: by, micros: (found?.micros ?? 0) + span });
    }
  }
  return [...totals.values()].sort((a, b) => b.micros - a.micros);
}

/** A named group of sampled time. */
export interface Bucket {
  readonly name: string;
  readonly matches: (time: SampledTime) => boolean;
}

/** Time summed by the first bucket matching each entry (the rest as "other"), largest first. */
export function byBucket(
  times: readonly SampledTime[],
  buckets: readonly Bucket[],
): { name: string; micros: number }[] {
  const sums = new Map<string, number>();
  for (const time of times) {
    const name = buckets.find((bucket) => bucket.matches(time))?.name ?? "other";
    sums.set(name, (sums.get(name) ?? 0) + time.micros);
  }
  return [...sums].map(([name, micros]) => ({ name, micros })).sort((a, b) => b.micros - a.micros);
}
