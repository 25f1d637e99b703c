import { z } from "zod";
import type { RateLimit } from "./rate-limiter.ts";

/**
 * Limits an API key or a tenant sets for itself. Each one left out falls back to the next less specific level
 * (key, then tenant, then the server's `ServerLimits`).
 */
export interface LimitOverrides {
  /**
   * On a key: its own token bucket, instead of the server's per-key rate (`false`: no per-key rate for it). On a
   * tenant: one bucket shared by all the tenant's keys, on top of each key's own (`false` or absent: none).
   */
  readonly rateLimit?: RateLimit | false;
  /** Largest request body, in bytes. Never above the server's own `maxBodyBytes`, which is checked first. */
  readonly maxBodyBytes?: number;
  /** Upstream silence allowed before the headers and between chunks, in milliseconds (504 beyond). */
  readonly upstreamTimeoutMs?: number;
}

/** The smallest `maxBodyBytes` a key or tenant may set (the flag's own minimum). */
export const MIN_BODY_BYTES = 1024;

/** A `RateLimit` as stored in a key file or a tenant limits file. */
export const rateLimitSchema = z.strictObject({
  requestsPerSecond: z.number().positive(),
  burst: z.number().min(1),
  maxWaitMs: z.number().min(0).optional(),
});

/**
 * `LimitOverrides` as stored in a key record or a tenant limits file. Unknown fields are refused, so a misspelt
 * limit is an error rather than a limit silently not applied.
 */
export const limitOverridesSchema = z.strictObject({
  rateLimit: z.union([rateLimitSchema, z.literal(false)]).optional(),
  maxBodyBytes: z.number().int().min(MIN_BODY_BYTES).optional(),
  upstreamTimeoutMs: z.number().positive().optional(),
});

/**
 * True when `overrides` sets no limit at all.
 *
 * @example
 * hasOverrides({}); // false
 */
export function hasOverrides(overrides: LimitOverrides | undefined): overrides is LimitOverrides {
  return (
    overrides !== undefined &&
    (overrides.rateLimit !== undefined ||
      overrides.maxBodyBytes !== undefined ||
      overrides.upstreamTimeoutMs !== undefined)
  );
}

// Compile-time check that the schema and the hand-written type agree.
type Assert<T extends true> = T;
type _OverridesMatch = Assert<z.output<typeof limitOverridesSchema> extends LimitOverrides ? true : false>;
