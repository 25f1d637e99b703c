import type { MiddlewareHandler } from "hono";
import { HttpError } from "../http/http-error.ts";
import type { ServerEnv } from "../server-context.ts";
import { RateLimiter, type RateDecision, type RateLimit } from "./rate-limiter.ts";

const UNLIMITED: RateDecision = { allowed: true, waitMs: 0 };

function take(limiter: RateLimiter, bucket: string, limit: RateLimit | false): RateDecision {
  return limit === false ? UNLIMITED : limiter.take(bucket, limit);
}

function tooManyRequests(whose: "key" | "tenant", retryAfterSeconds: number): HttpError {
  return new HttpError(
    429,
    "rate_limited",
    `too many requests for this ${whose}; retry after ${retryAfterSeconds} s`,
    { "Retry-After": String(retryAfterSeconds) },
  );
}

/**
 * Applies the request's rate limits (`c.get("limits")`): the key's own token bucket (per tenant without auth) and
 * the bucket its tenant's keys share. A request over a rate waits its turn (up to that limit's `maxWaitMs`);
 * beyond that it gets 429 `rate_limited` with `Retry-After` seconds. A request one bucket refuses takes nothing
 * from the other.
 *
 * @example
 * app.use("/v1/*", rateLimit(() => metrics.rateLimited.inc()));
 */
export function rateLimit(onLimited: () => void = () => undefined): MiddlewareHandler<ServerEnv> {
  const keys = new RateLimiter();
  const tenants = new RateLimiter();
  return async (c, next) => {
    const limits = c.get("limits");
    const tenant = c.get("tenant");
    const keyBucket = c.get("keyId") ?? `tenant:${tenant}`;
    const byKey = take(keys, keyBucket, limits.keyRate);
    if (!byKey.allowed) {
      onLimited();
      throw tooManyRequests("key", byKey.retryAfterSeconds);
    }
    const byTenant = take(tenants, tenant, limits.tenantRate);
    if (!byTenant.allowed) {
      if (limits.keyRate !== false) keys.giveBack(keyBucket);
      onLimited();
      throw tooManyRequests("tenant", byTenant.retryAfterSeconds);
    }
    const waitMs = Math.max(byKey.waitMs, byTenant.waitMs);
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
    await next();
  };
}
