import type { ContextKind } from "../metrics/context-kind.ts";

/**
 * Upper ends of the age buckets reuse rates are given for, in requests since a piece of context arrived: ages 0,
 * 1, 2, 3–4, 5–7, 8–12, 13–20, 21–33, 34–54 and 55 or more.
 */
export const REUSE_AGE_LIMITS: readonly number[] = [0, 1, 2, 4, 7, 12, 20, 33, 54, Number.POSITIVE_INFINITY];

/** Reuse rates by kind of context: one chance per age bucket of `REUSE_AGE_LIMITS`, not rising with age. */
export type ReuseRates = Readonly<Record<ContextKind, readonly number[]>>;

/**
 * The chance that the agent's next reply uses a piece of context (copies a line, path, identifier or literal
 * from it that no newer message holds), by what the piece is and its age in requests. Measured on the 27 long
 * real sessions of the shared corpus (Claude Code, Codex, Gemini CLI, SWE-agent, tau-bench) by `npm run bench`,
 * section 4 (bench/support/reuse-rates.ts), which prints the measured rates and this fit of them: per kind, the
 * closest sequence that does not rise with age, each bucket weighted by the requests it counted (a bucket that
 * measured more uses than a younger one did so by a few uses). They are rates of agent behaviour, not
 * thresholds: governance compares them with the miss rate the user accepts (`groundingTarget`) and with prices.
 */
export const DEFAULT_REUSE_RATES: ReuseRates = {
  read: [0.427, 0.147, 0.128, 0.091, 0.067, 0.031, 0.02, 0.013, 0.01, 0.003],
  search: [0.253, 0.064, 0.034, 0.034, 0.025, 0.016, 0.008, 0.003, 0.003, 0.001],
  edit: [0.568, 0.164, 0.118, 0.086, 0.042, 0.037, 0.015, 0.007, 0.005, 0.002],
  shell: [0.188, 0.064, 0.047, 0.035, 0.018, 0.008, 0.005, 0.002, 0.001, 0.001],
  other: [0.081, 0.045, 0.039, 0.039, 0.016, 0.008, 0.008, 0.004, 0.004, 0],
  written: [0.524, 0.208, 0.144, 0.086, 0.061, 0.043, 0.026, 0.013, 0.007, 0.003],
};

/**
 * What the reuse rates weigh, per kind and age bucket, against what a session's own agent did
 * (`reuseRatesWeight`), in the unit of the session's count: replies a piece was in the history for (a piece
 * that lived through ages 13–20 counts 8). The sessions of the corpus differ from one another about as much as
 * samples of this size do (the method-of-moments estimate of a beta-binomial's prior size, pooled over kinds and
 * ages; the bench prints it). A session's own reuse takes over from the corpus's once it has counted about as much.
 */
export const DEFAULT_REUSE_RATES_WEIGHT = 25;

/**
 * The chance that the next reply uses a piece of context of `kind` that arrived `age` requests ago
 * (0: the request that first sees it), from `rates` (the policy's `reuseRates`) or else the measured defaults.
 *
 * @example
 * reuseRate("read", 3) // 0.089: a file read 3 requests ago is used by the next reply about 9% of the time
 */
export function reuseRate(kind: ContextKind, age: number, rates?: Partial<ReuseRates>): number {
  return (rates?.[kind] ?? DEFAULT_REUSE_RATES[kind])[reuseBucket(age)]!;
}

/**
 * The age bucket (index into `REUSE_AGE_LIMITS`) of a piece `age` requests old.
 *
 * @example
 * reuseBucket(3) // 3: ages 3–4
 */
export function reuseBucket(age: number): number {
  const bucket = REUSE_AGE_LIMITS.findIndex((limit) => age <= limit);
  return bucket < 0 ? REUSE_AGE_LIMITS.length - 1 : bucket;
}

/**
 * The non-increasing rates closest to `used[b] / alive[b]`, each bucket weighted by `alive[b]`
 * (pool-adjacent-violators): a bucket that measured more uses than a younger one is pooled with it. A bucket
 * nothing was alive in carries no weight: it joins the block before it (the first ones, the block after).
 *
 * @example
 * nonIncreasingFit([5, 1, 3], [10, 10, 10]) // [0.5, 0.2, 0.2]
 */
export function nonIncreasingFit(used: readonly number[], alive: readonly number[]): number[] {
  const rate = (block: { used: number; alive: number }) => (block.alive === 0 ? 0 : block.used / block.alive);
  const blocks: { used: number; alive: number; size: number }[] = [];
  for (const [bucket, count] of alive.entries()) {
    blocks.push({ used: used[bucket]!, alive: count, size: 1 });
    while (blocks.length > 1) {
      const last = blocks.at(-1)!;
      const before = blocks.at(-2)!;
      if (last.alive > 0 && rate(before) >= rate(last)) break;
      blocks.splice(-2, 2, {
        used: before.used + last.used,
        alive: before.alive + last.alive,
        size: before.size + last.size,
      });
    }
  }
  return blocks.flatMap((block) => Array.from({ length: block.size }, () => rate(block)));
}
