import type { MiddlewareHandler } from "hono";
import type { ServerEnv } from "../server-context.ts";

/**
 * How often a live stream's key is checked again: a key revoked since ends the stream within a second. Every
 * stream that outlives its request's key check (SSE streams, the sync socket) uses it.
 */
export const KEY_RECHECK_MS = 500;

/**
 * Bytes of a stream a client may leave unread (the server holds them for it) before it is dropped: a client that
 * reads more slowly than the stream is written, or never, costs at most this much memory beyond the socket's
 * buffers.
 */
export const MAX_UNREAD_BYTES = 4 * 1024 * 1024;

/** Options of `guardStream`. */
export interface StreamGuard {
  /** Whether the request's key is still valid; checked every `KEY_RECHECK_MS` when given. */
  readonly isValid?: () => Promise<boolean>;
  /** Closes the client's connection (a client dropped for reading too slowly is not waited for). */
  readonly drop?: (reason: Error) => void;
  readonly recheckMs?: number;
  readonly maxUnreadBytes?: number;
}

/**
 * `body` relayed to the client as it is produced, read from its source at once: the chunks the client has not
 * read yet are held, and a client that leaves more than `maxUnreadBytes` unread is dropped (`drop` closes its
 * connection, its stream errors, the source is cancelled as if the client had gone away: a proxied turn fails and
 * stores nothing, its upstream call is aborted). With `isValid`, the stream ends within `recheckMs` of its key
 * being revoked (or of the key store failing to answer: the client reconnects and is checked afresh), the source
 * cancelled the same way.
 *
 * @example
 * const guarded = guardStream(response.body, { isValid: keyIsValid, drop: () => socket.destroy() });
 */
export function guardStream(
  body: ReadableStream<Uint8Array>,
  guard: StreamGuard = {},
): ReadableStream<Uint8Array> {
  const maxUnread = guard.maxUnreadBytes ?? MAX_UNREAD_BYTES;
  const reader = body.getReader();
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  const stop = (reason: unknown) => {
    ended = true;
    clearInterval(timer);
    reader.cancel(reason).catch(() => undefined);
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const isValid = guard.isValid;
        if (isValid !== undefined) {
          timer = setInterval(() => {
            void isValid()
              .catch(() => false)
              .then((valid) => {
                if (valid || ended) return;
                stop(new Error("the request's API key was revoked"));
                controller.close();
              });
          }, guard.recheckMs ?? KEY_RECHECK_MS);
          timer.unref();
        }
        const relay = async () => {
          for (;;) {
            const { done, value } = await reader.read();
            if (ended) return;
            if (done) {
              ended = true;
              clearInterval(timer);
              controller.close();
              return;
            }
            // With a byte-sized queue and no read-ahead, desiredSize is minus the bytes the client left unread.
            if ((controller.desiredSize ?? 0) < -maxUnread) {
              const reason = new Error(`the client left more than ${maxUnread} bytes unread; it was dropped`);
              stop(reason);
              // A dropped connection tells the client; without one (no socket to close), the stream errors.
              if (guard.drop === undefined) controller.error(reason);
              else {
                guard.drop(reason);
                controller.close();
              }
              return;
            }
            controller.enqueue(value);
          }
        };
        relay().catch((error: unknown) => {
          if (ended) return;
          ended = true;
          clearInterval(timer);
          controller.error(error);
        });
      },
      cancel(reason) {
        if (ended) return;
        stop(reason);
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: 0 }),
  );
}

/**
 * Guards every streamed answer (Server-Sent Events: `/v1/events`, proxied model streams) with `guardStream`: a
 * client that reads too slowly is dropped, and with `auth` a stream ends within a second of its key being revoked
 * (its check at the start of the request does not cover the minutes a stream may last).
 *
 * @example
 * app.use("/v1/*", guardStreams(true));
 */
export function guardStreams(auth: boolean): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    await next();
    // The content type first: reading `body` turns the Node server's light response into a web one (a copy, and
    // the slow path of writing it), which only a stream needs.
    if (!(c.res.headers.get("content-type") ?? "").startsWith("text/event-stream")) return;
    const body = c.res.body;
    if (body === null) return;
    // The Node server's response, when there is one (not under `app.request` in tests).
    const outgoing = (c.env as { outgoing?: { destroy(error?: Error): void } } | undefined)?.outgoing;
    c.res = new Response(
      guardStream(body, {
        ...(auth && { isValid: c.get("keyIsValid") }),
        ...(outgoing !== undefined && { drop: () => outgoing.destroy() }),
      }),
      c.res,
    );
  };
}
