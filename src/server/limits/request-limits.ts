import type { ServerLimits } from "../server-options.ts";
import type { LimitOverrides } from "./limit-overrides.ts";
import type { RateLimit } from "./rate-limiter.ts";

/** The limits one request runs under, once its key and tenant are known. */
export interface RequestLimits {
  /** The key's own token bucket (the key's rate, else the server's per-key rate), or `false` for none. */
  readonly keyRate: RateLimit | false;
  /** The bucket all the tenant's keys share, or `false` when the tenant sets none. */
  readonly tenantRate: RateLimit | false;
  /** Largest body: the key's, else the tenant's, else the server's — never above the server's. */
  readonly maxBodyBytes: number;
  /** Upstream silence allowed: the key's, else the tenant's, else the server's. */
  readonly upstreamTimeoutMs: number;
}

/**
 * The most specific limit of each kind: key over tenant over server. Rates are not chosen between but stacked: a
 * request must fit both the key's bucket and the tenant's. A body limit above the server's is capped at the
 * server's, which is enforced before the key is known.
 *
 * @example
 * resolveLimits(DEFAULT_LIMITS, { rateLimit: { requestsPerSecond: 50, burst: 100 } }, { maxBodyBytes: 65_536 });
 * // { keyRate: DEFAULT_LIMITS.rateLimit, tenantRate: { requestsPerSecond: 50, … }, maxBodyBytes: 65536, … }
 */
export function resolveLimits(
  server: ServerLimits,
  tenant: LimitOverrides | undefined,
  key: LimitOverrides | undefined,
): RequestLimits {
  const maxBodyBytes = key?.maxBodyBytes ?? tenant?.maxBodyBytes ?? server.maxBodyBytes;
  return {
    keyRate: key?.rateLimit ?? server.rateLimit,
    tenantRate: tenant?.rateLimit ?? false,
    maxBodyBytes: Math.min(maxBodyBytes, server.maxBodyBytes),
    upstreamTimeoutMs: key?.upstreamTimeoutMs ?? tenant?.upstreamTimeoutMs ?? server.upstreamTimeoutMs,
  };
}
