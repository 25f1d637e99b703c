import type { MiddlewareHandler } from "hono";
import { HttpError } from "./http-error.ts";

const WRITES = new Set(["POST", "PUT", "PATCH"]);

/**
 * Requires `Content-Type: application/json` on every POST, PUT and PATCH, with or without a body. Such a request
 * is never "simple" for a browser, so a web page cannot send it cross-site without a CORS preflight, which this
 * server never grants: no cross-site request forgery even when authentication is off.
 *
 * @example
 * app.use("/v1/*", requireJsonWrites());
 */
export function requireJsonWrites(): MiddlewareHandler {
  return async (c, next) => {
    if (WRITES.has(c.req.method) && !/^application\/json\s*(;|$)/i.test(c.req.header("content-type") ?? "")) {
      throw new HttpError(
        415,
        "unsupported_media_type",
        "send writes with Content-Type: application/json (an empty body may be {})",
      );
    }
    await next();
  };
}
