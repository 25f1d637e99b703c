import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HttpError } from "../http/http-error.ts";
import type { ServerEnv } from "../server-context.ts";

/**
 * 413 `payload_too_large` for a body over `maxBytes`: at once from a `Content-Length` above it, else as soon as a
 * streamed (chunked) body passes it (never buffering more than `maxBytes`).
 *
 * A request without `Transfer-Encoding` has exactly its `Content-Length` of body (none without one; Node's parser
 * holds it to that), so its header decides and the body is left alone: touching `c.req.raw.body`, as hono's
 * `bodyLimit` does first, turns the request into a web stream, and every body read after it goes through web
 * streams instead of the Node adapter's direct read.
 *
 * @example
 * app.use("*", bodySizeLimit(4 * 1024 * 1024));
 */
export function bodySizeLimit(maxBytes: number): MiddlewareHandler<ServerEnv> {
  const tooLarge = () => {
    throw new HttpError(413, "payload_too_large", `the request body is larger than ${maxBytes} bytes`);
  };
  const streamed = bodyLimit({ maxSize: maxBytes, onError: tooLarge });
  return async (c, next) => {
    if (c.req.header("transfer-encoding") !== undefined) return streamed(c, next);
    const length = c.req.header("content-length");
    if (length !== undefined && Number(length) > maxBytes) tooLarge();
    await next();
  };
}
