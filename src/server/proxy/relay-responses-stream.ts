import type { AssistantReply } from "../upstream/assistant-reply.ts";
import type { UpstreamResponse } from "../upstream/call-upstream.ts";
import { eventObject, sseEvents } from "../upstream/sse-event-splitter.ts";
import { relayStream } from "./relay-stream.ts";
import { replyFromResponse } from "./responses-reply.ts";

/** Options of `relayResponsesStream`. */
export interface ResponsesRelayOptions {
  readonly upstream: UpstreamResponse;
  /** The response id the client sees (undefined: the upstream's). */
  readonly responseId: string | undefined;
  /** Stores the whole reply; runs before `response.completed` is forwarded. A rejection is sent as an error event. */
  readonly complete: (reply: AssistantReply) => Promise<unknown>;
  /**
   * Runs once when the stream fails, is cut short, or the client goes away before the reply is being stored:
   * nothing was stored. A client that goes away while it is being stored does not fail the request.
   */
  readonly fail: (reason: unknown) => void;
  /** Turns a failure into `{ code, message }` for the `error` event sent last. */
  readonly errorObject: (reason: unknown) => { code: string; message: string };
}

const encoder = new TextEncoder();
const ENDINGS = new Set(["response.completed", "response.incomplete"]);

type JsonRecord = Record<string, unknown>;

function serialise(data: JsonRecord): Uint8Array {
  const type = typeof data["type"] === "string" ? `event: ${data["type"]}\n` : "";
  return encoder.encode(`${type}data: ${JSON.stringify(data)}\n\n`);
}

/**
 * The client's side of a proxied Responses stream: the upstream's events forwarded as they arrive, with the
 * `response` objects carrying ctxkit's response id; the reply is stored before `response.completed` (or
 * `response.incomplete`) is sent, and an `error` event ends the stream instead when the upstream breaks off,
 * fails, or storing fails.
 *
 * @example
 * return new Response(relayResponsesStream({ upstream, responseId, complete, fail, errorObject }), { headers });
 */
export function relayResponsesStream(options: ResponsesRelayOptions): ReadableStream<Uint8Array> {
  let sequence = 0;
  const rewrite = (data: JsonRecord): JsonRecord => {
    if (typeof data["sequence_number"] === "number") sequence = data["sequence_number"];
    const response = data["response"];
    if (options.responseId === undefined || typeof response !== "object" || response === null) return data;
    return { ...data, response: { ...(response as JsonRecord), id: options.responseId } };
  };
  return relayStream({
    ...options,
    errorEvent: (reason) =>
      serialise({
        type: "error",
        ...options.errorObject(reason),
        param: null,
        sequence_number: sequence + 1,
      }),
    read: async (send) => {
      let ending: JsonRecord | undefined;
      let failed: unknown;
      for await (const event of sseEvents(options.upstream.chunks())) {
        const data = eventObject(event);
        if (data === undefined) continue;
        const type = data["type"];
        if (typeof type === "string" && ENDINGS.has(type)) {
          ending = rewrite(data);
          continue;
        }
        if (type === "error" || type === "response.failed") failed ??= data;
        send(serialise(rewrite(data)));
      }
      if (ending === undefined || failed !== undefined)
        return {
          complete: false,
          error: failed,
          cutShort: "the upstream stream ended before the response was complete",
        };
      const final = ending;
      return { complete: true, reply: () => replyFromResponse(final["response"]), last: serialise(final) };
    },
  });
}
