import { HttpError } from "./http-error.ts";

/**
 * A list route's `limit` query parameter: a whole number from 1 to 1000 written in digits (`5abc`, `1.9` and `1e3`
 * are refused with a 400, not read as 5, 1 and 1), else `fallback` when it is absent.
 *
 * @example
 * const limit = limitParameter(c.req.query("limit"), 50);
 */
export function limitParameter(value: string | undefined, fallback: number): number;
export function limitParameter(value: string | undefined): number | undefined;
export function limitParameter(value: string | undefined, fallback?: number): number | undefined {
  if (value === undefined) return fallback;
  const limit = /^\d{1,4}$/.test(value) ? Number(value) : Number.NaN;
  if (!(limit >= 1 && limit <= 1000)) {
    throw new HttpError(400, "invalid_input", "limit must be a whole number from 1 to 1000");
  }
  return limit;
}
