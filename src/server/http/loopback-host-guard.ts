import type { MiddlewareHandler } from "hono";
import { HttpError } from "./http-error.ts";

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);

/**
 * True when a `Host` header names the loopback interface (any port).
 *
 * @example
 * isLoopbackHost("127.0.0.1:7710"); // true
 * isLoopbackHost("evil.example:7710"); // false
 */
export function isLoopbackHost(host: string | undefined): boolean {
  if (host === undefined) return false;
  const name = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.replace(/:\d+$/, "");
  return LOOPBACK_HOSTS.has(name.toLowerCase());
}

/**
 * Without authentication, answers 403 to any request whose `Host` is not a loopback name: a web page that
 * rebinds its DNS name to 127.0.0.1 cannot reach the API.
 *
 * @example
 * if (!auth) app.use("*", loopbackHostGuard());
 */
export function loopbackHostGuard(): MiddlewareHandler {
  return async (c, next) => {
    if (!isLoopbackHost(c.req.header("host"))) {
      throw new HttpError(
        403,
        "forbidden_host",
        "this server runs without authentication and only answers requests addressed to 127.0.0.1 or localhost",
      );
    }
    await next();
  };
}
