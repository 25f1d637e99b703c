import { randomUUID } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import type { ServerMetrics } from "../metrics/server-metrics.ts";
import type { ServerEnv } from "../server-context.ts";

/**
 * Gives each request an id (`X-Request-Id`), and once its response headers are ready, counts it, times it and
 * logs one line: method, route pattern, status, milliseconds and request id. Never a header, a key, an id of a
 * session or any content.
 *
 * @example
 * app.use("*", observeRequests(metrics, (line) => process.stderr.write(`${line}\n`)));
 */
export function observeRequests(
  metrics: ServerMetrics,
  log: (line: string) => void,
): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    const started = performance.now();
    const requestId = randomUUID();
    c.set("requestId", requestId);
    await next();
    const seconds = (performance.now() - started) / 1000;
    const matched = routePath(c, -1);
    const route = matched === "*" || matched === "/*" ? "unmatched" : matched;
    const status = String(c.res.status);
    c.res.headers.set("X-Request-Id", requestId);
    metrics.requests.inc({ method: c.req.method, route, status });
    metrics.requestDuration.observe({ route }, seconds);
    log(`${c.req.method} ${route} ${status} ${(seconds * 1000).toFixed(1)}ms ${requestId}`);
  };
}
