// Reads the `.cpuprofile` files a process wrote with `node --cpu-prof` (one per thread) and sums their samples'
// self time within a window of the machine's monotonic clock, by function and by the bucket of code it belongs to.
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
  }[];
  /** Microseconds of the monotonic clock (CLOCK_MONOTONIC on Linux, as `process.hrtime`). */
  readonly startTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** Self time of one function (or V8's `(garbage collector)`, `(program)`, `(idle)`) over a window. */
export interface SelfTime {
  /** `name (file:line)`, the file relative to the checkout or a package's name. */
  readonly frame: string;
  readonly url: string;
  readonly micros: number;
  /** The profile file (one per thread: `CPU.<date>.<pid>.<thread>.<seq>.cpuprofile`) of the time. */
  readonly thread: string;
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
 * Self time by function of every profile in `folder`, counting samples taken between `fromMicros` and
 * `toMicros`; `(idle)` is left out (a thread waiting costs no CPU). Sorted, largest first.
 */
export function selfTimes(
  folder: string,
  fromMicros: number,
  toMicros: number,
  checkout: string,
): SelfTime[] {
  const totals = new Map<string, SelfTime>();
  for (const file of readdirSync(folder).filter((name) => name.endsWith(".cpuprofile"))) {
    const profile = JSON.parse(readFileSync(join(folder, file), "utf8")) as CpuProfile;
    const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
    let at = profile.startTime;
    for (let index = 0; index < profile.samples.length; index++) {
      at += profile.timeDeltas[index] ?? 0;
      // A sample stands for the time until the next one.
      const span = profile.timeDeltas[index + 1] ?? 0;
      if (at < fromMicros || at > toMicros) continue;
      const frame = frames.get(profile.samples[index]!)!;
      if (frame.functionName === "(idle)") continue;
      const url = shortUrl(frame.url, checkout);
      const key = url === "" ? frame.functionName : `${frame.functionName || "(anonymous)"} (${url}:${frame.lineNumber + 1})`;
      const found = totals.get(`${file} ${key}`);
      totals.set(`${file} ${key}`, { frame: key, url, micros: (found?.micros ?? 0) + span, thread: file });
    }
  }
  return [...totals.values()].sort((a, b) => b.micros - a.micros);
}

/** A named group of code, matched on a function's file (or V8's name for code that has none). */
export interface Bucket {
  readonly name: string;
  readonly matches: (time: SelfTime) => boolean;
}

/** Self time summed by the first bucket matching each function (the rest as "other"), largest first. */
export function byBucket(times: readonly SelfTime[], buckets: readonly Bucket[]): { name: string; micros: number }[] {
  const sums = new Map<string, number>();
  for (const time of times) {
    const name = buckets.find((bucket) => bucket.matches(time))?.name ?? "other";
    sums.set(name, (sums.get(name) ?? 0) + time.micros);
  }
  return [...sums].map(([name, micros]) => ({ name, micros })).sort((a, b) => b.micros - a.micros);
}
