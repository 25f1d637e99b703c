import type { AssistantReply } from "../upstream/assistant-reply.ts";
import type { UpstreamResponse } from "../upstream/call-upstream.ts";
import { SseEventSplitter, type RawSseEvent } from "../upstream/sse-event-splitter.ts";
import { replyFromResponse } from "./responses-reply.ts";

/** Options of `relayResponsesStream`. */
export interface ResponsesRelayOptions {
  readonly upstream: UpstreamResponse;
  /** The response id the client sees (undefined: the upstream's). */
  readonly responseId: string | undefined;
  /** Stores the whole reply; runs before `response.completed` is forwarded. A rejection is sent as an error event. */
  readonly complete: (reply: AssistantReply) => Promise<void>;
  /** Runs once when the stream fails, is cut short, or the client goes away: nothing was stored. */
  readonly fail: (reason: unknown) => void;
  /** Turns a failure into `{ code, message }` for the `error` event sent last. */
  readonly errorObject: (reason: unknown) => { code: string; message: string };
}

const encoder = new TextEncoder();
const ENDINGS = new Set(["response.completed", "response.incomplete"]);

type JsonRecord = Record<string, unknown>;

function parse(event: RawSseEvent): JsonRecord | undefined {
  if (event.data === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(event.data);
    return typeof value === "object" && value !== null ? (value as JsonRecord) : undefined;
  } catch {
    return undefined;
  }
}

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
  let settled = false;
  let sequence = 0;
  const fail = (reason: unknown) => {
    if (settled) return;
    settled = true;
    options.fail(reason);
  };
  const errorEvent = (reason: unknown) =>
    serialise({ type: "error", ...options.errorObject(reason), param: null, sequence_number: sequence + 1 });
  const rewrite = (data: JsonRecord): JsonRecord => {
    if (typeof data["sequence_number"] === "number") sequence = data["sequence_number"];
    const response = data["response"];
    if (options.responseId === undefined || typeof response !== "object" || response === null) return data;
    return { ...data, response: { ...(response as JsonRecord), id: options.responseId } };
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const run = async () => {
        const upstream = options.upstream;
        const splitter = new SseEventSplitter();
        let ending: JsonRecord | undefined;
        let failed: unknown;
        const handle = (event: RawSseEvent) => {
          const data = parse(event);
          if (data === undefined) return;
          const type = data["type"];
          if (typeof type === "string" && ENDINGS.has(type)) {
            ending = rewrite(data);
            return;
          }
          if (type === "error" || type === "response.failed") failed ??= data;
          controller.enqueue(serialise(rewrite(data)));
        };
        for await (const chunk of upstream.chunks()) {
          for (const event of splitter.push(chunk)) handle(event);
        }
        const tail = splitter.end();
        if (tail !== undefined) handle(tail);
        if (ending === undefined || failed !== undefined) {
          fail(failed ?? new Error("the upstream stream ended before the response was complete"));
          if (failed === undefined) controller.enqueue(errorEvent(undefined));
          controller.close();
          return;
        }
        try {
          await options.complete(replyFromResponse(ending["response"]));
          settled = true;
        } catch (error) {
          fail(error);
          controller.enqueue(errorEvent(error));
          controller.close();
          return;
        }
        controller.enqueue(serialise(ending));
        controller.close();
      };
      run().catch((error: unknown) => {
        fail(error);
        try {
          controller.enqueue(errorEvent(error));
          controller.close();
        } catch {
          // The client is gone: there is no one left to tell.
        }
      });
    },
    cancel(reason) {
      fail(reason);
      options.upstream.abort(reason);
    },
  });
}
