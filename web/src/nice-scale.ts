/** An axis from 0: its top and the distance between its ticks, both round numbers. */
export interface NiceScale {
  readonly max: number;
  readonly step: number;
}

const STEPS = [1, 2, 2.5, 5, 10];

/**
 * The axis that fits values up to `largest` with about `ticks` round ticks (1, 2, 2.5 or 5 times a power of ten):
 * its top is the first tick at or above `largest`, so the data fills the plot.
 *
 * @example
 * niceScale(37_412); // { max: 40_000, step: 10_000 }
 * niceScale(181_000); // { max: 200_000, step: 50_000 }
 */
export function niceScale(largest: number, ticks = 4): NiceScale {
  if (!(largest > 0) || !Number.isFinite(largest)) return { max: 1, step: 0.25 };
  const rough = largest / ticks;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = STEPS.map((factor) => factor * power).find((candidate) => candidate >= rough)!;
  return { max: Math.ceil(largest / step) * step, step };
}
