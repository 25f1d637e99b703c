import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HttpError } from "../http/http-error.ts";
import type { ServerEnv } from "../server-context.ts";

/**
 * 413 `payload_too_large` for a body over `maxBytes`: at once from a `Content-Length` above it, else as soon as a
 * streamed body passes it (never buffering more than `maxBytes`).
 *
 * @example
 * app.use("*", bodySizeLimit(4 * 1024 * 1024));
 */
export function bodySizeLimit(maxBytes: number): MiddlewareHandler<ServerEnv> {
  return bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw new HttpError(413, "payload_too_large", `the request body is larger than ${maxBytes} bytes`);
    },
  });
}
