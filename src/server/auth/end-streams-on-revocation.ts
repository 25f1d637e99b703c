import type { MiddlewareHandler } from "hono";
import type { ServerEnv } from "../server-context.ts";

/**
 * How often a live stream's key is checked again: a key revoked since ends the stream within a second. Every
 * stream that outlives its request's key check (SSE streams, the sync socket) uses it.
 */
export const KEY_RECHECK_MS = 500;

/**
 * `body` relayed chunk by chunk as the client reads it (nothing buffered), ended within `KEY_RECHECK_MS` of its
 * key being revoked (or of the key store failing to answer: the client reconnects and is checked afresh). The
 * source is cancelled then, as when the client goes away.
 *
 * @example
 * const guarded = endOnRevocation(response.body, () => keyIsValid());
 */
export function endOnRevocation(
  body: ReadableStream<Uint8Array>,
  isValid: () => Promise<boolean>,
  everyMs = KEY_RECHECK_MS,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  const end = () => {
    ended = true;
    clearInterval(timer);
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      timer = setInterval(() => {
        void isValid()
          .catch(() => false)
          .then((valid) => {
            if (valid || ended) return;
            end();
            reader.cancel(new Error("the request's API key was revoked")).catch(() => undefined);
            controller.close();
          });
      }, everyMs);
      timer.unref();
    },
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (ended) return;
        if (done) {
          end();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        if (ended) return;
        end();
        controller.error(error);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
}

/**
 * Ends every streamed answer (Server-Sent Events: `/v1/events`, proxied model streams) within a second of its key
 * being revoked: its check at the start of the request does not cover the minutes a stream may last.
 *
 * @example
 * app.use("/v1/*", endStreamsOnRevocation());
 */
export function endStreamsOnRevocation(): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    await next();
    const body = c.res.body;
    if (body === null || !(c.res.headers.get("content-type") ?? "").startsWith("text/event-stream")) return;
    c.res = new Response(endOnRevocation(body, c.get("keyIsValid")), c.res);
  };
}
