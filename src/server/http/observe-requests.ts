import { randomUUID } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import type { ServerMetrics } from "../metrics/server-metrics.ts";
import type { ServerEnv } from "../server-context.ts";

const CATCH_ALL = new Set(["*", "/*"]);

/**
 * The route pattern a request is counted under: the first route registered for its method that matched it
 * (middleware, registered for every method, never names a request; a request a middleware answered — 401, 429 —
 * still counts under the route it asked for). The inspector's catch-all names the files it serves; anything
 * else is "unmatched".
 */
function routeOf(c: Context<ServerEnv>): string {
  const route = matchedRoutes(c).find((matched) => matched.method !== "ALL");
  if (route === undefined) return "unmatched";
  return CATCH_ALL.has(route.path) && c.res.status === 404 ? "unmatched" : route.path;
}

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
    const route = routeOf(c);
    const status = String(c.res.status);
    c.res.headers.set("X-Request-Id", requestId);
    metrics.requests.inc({ method: c.req.method, route, status });
    metrics.requestDuration.observe({ route }, seconds);
    log(`${c.req.method} ${route} ${status} ${(seconds * 1000).toFixed(1)}ms ${requestId}`);
  };
}
