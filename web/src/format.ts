/** Number, date and cost formatting of the inspector. */

const integer = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

/**
 * A token count with thousands separators.
 *
 * @example
 * tokens(12345); // "12,345"
 */
export function tokens(value: number): string {
  return integer.format(value);
}

/**
 * A compact token count for axes (12k, 1.2M).
 *
 * @example
 * shortTokens(12_000); // "12k"
 */
export function shortTokens(value: number): string {
  if (value >= 1_000_000) return `${(value / 1_000_000).toFixed(1)}M`;
  if (value >= 1_000) return `${Math.round(value / 1_000)}k`;
  return String(value);
}

/**
 * A cost in dollars.
 *
 * @example
 * cost(0.01234); // "$0.0123"
 */
export function cost(value: number): string {
  return value === 0 ? "—" : `$${value < 1 ? value.toFixed(4) : value.toFixed(2)}`;
}

/**
 * A date-time in the reader's locale (or the raw string when it does not parse).
 *
 * @example
 * when("2026-03-01T12:00:00.000Z");
 */
export function when(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  // Importers date messages of transcripts that record no time at the epoch.
  return date.getTime() === 0 ? "time unknown" : date.toLocaleString();
}

/**
 * A share as a percentage.
 *
 * @example
 * percent(0.256); // "26%"
 */
export function percent(share: number): string {
  return `${Math.round(share * 100)}%`;
}

/**
 * A cost in units of the model's uncached input price (one unit: one input token sent without a cache).
 *
 * @example
 * units(762250.8); // "762,251"
 */
export function units(value: number): string {
  return integer.format(value);
}
