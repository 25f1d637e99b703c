import type { ContextKind } from "../metrics/context-kind.ts";

/** Upper ends of the age buckets the rates are given for, in requests since a piece of context arrived. */
const AGE_LIMITS = [0, 1, 2, 4, 7, 12, 20, 33, 54, Number.POSITIVE_INFINITY] as const;

/**
 * The chance that the agent's next reply uses a piece of context (copies a line, path, identifier or literal
 * from it that no newer message holds), by what the piece is and its age in requests. Measured on the 19 long
 * real sessions of the shared corpus (Claude Code, Codex, Gemini CLI, SWE-agent, tau-bench) in November 2026 by
 * `npm run bench`, section 4 (bench/support/reuse-rates.ts), which prints today's table from the data; a later
 * version of that count differs from these by up to about a point. They are rates of agent behaviour, not thresholds: governance compares them
 * with the miss rate the user accepts (`groundingTarget`) and with prices.
 */
const RATES: Readonly<Record<ContextKind, readonly number[]>> = {
  read: [0.484, 0.167, 0.17, 0.089, 0.069, 0.022, 0.019, 0.013, 0.008, 0.002],
  search: [0.167, 0.058, 0.034, 0.026, 0.035, 0.015, 0.003, 0.002, 0, 0],
  edit: [0.595, 0.223, 0.159, 0.092, 0.047, 0.048, 0.014, 0.007, 0.006, 0.002],
  shell: [0.195, 0.068, 0.027, 0.022, 0.017, 0.011, 0.004, 0.001, 0, 0.001],
  other: [0.065, 0.037, 0.019, 0.04, 0.01, 0.002, 0.009, 0.009, 0.009, 0.001],
  written: [0.346, 0.141, 0.099, 0.048, 0.045, 0.027, 0.017, 0.005, 0.001, 0.003],
};

/**
 * The measured chance that the next reply uses a piece of context of `kind` that arrived `age` requests ago
 * (0: the request that first sees it).
 *
 * @example
 * reuseRate("read", 3) // 0.089: a file read 3 requests ago is used by the next reply about 9% of the time
 */
export function reuseRate(kind: ContextKind, age: number): number {
  const bucket = AGE_LIMITS.findIndex((limit) => age <= limit);
  return RATES[kind][bucket < 0 ? AGE_LIMITS.length - 1 : bucket]!;
}
