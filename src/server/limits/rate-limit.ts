import type { MiddlewareHandler } from "hono";
import { HttpError } from "../http/http-error.ts";
import type { ServerEnv } from "../server-context.ts";
import type { RateLimiter } from "./rate-limiter.ts";

/**
 * Applies the per-key token bucket (per tenant without auth): a request over the rate waits its turn (up to the
 * limit's `maxWaitMs`), beyond that it gets 429 `rate_limited` with `Retry-After` seconds.
 *
 * @example
 * app.use("/v1/*", rateLimit(new RateLimiter({ requestsPerSecond: 50, burst: 100 }), () => metrics.rateLimited.inc()));
 */
export function rateLimit(
  limiter: RateLimiter,
  onLimited: () => void = () => undefined,
): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    const decision = limiter.take(c.get("keyId") ?? `tenant:${c.get("tenant")}`);
    if (!decision.allowed) {
      onLimited();
      throw new HttpError(
        429,
        "rate_limited",
        `too many requests for this key; retry after ${decision.retryAfterSeconds} s`,
        { "Retry-After": String(decision.retryAfterSeconds) },
      );
    }
    if (decision.waitMs > 0) await new Promise((resolve) => setTimeout(resolve, decision.waitMs));
    await next();
  };
}
