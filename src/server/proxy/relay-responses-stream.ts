import type { AssistantReply } from "../upstream/assistant-reply.ts";
import type { UpstreamResponse } from "../upstream/call-upstream.ts";
import { SseEventSplitter, type RawSseEvent } from "../upstream/sse-event-splitter.ts";
import { RelayEnding } from "./relay-ending.ts";
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
  const relay = new RelayEnding(options.fail);
  let sequence = 0;
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
      relay.attach(controller);
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
          relay.send(serialise(rewrite(data)));
        };
        for await (const chunk of upstream.chunks()) {
          for (const event of splitter.push(chunk)) handle(event);
        }
        const tail = splitter.end();
        if (tail !== undefined) handle(tail);
        if (ending === undefined || failed !== undefined) {
          relay.fail(failed ?? new Error("the upstream stream ended before the response was complete"));
          relay.finish(failed === undefined && !relay.gone ? errorEvent(undefined) : undefined);
          return;
        }
        const final = ending;
        if (!(await relay.store(() => options.complete(replyFromResponse(final["response"])), errorEvent)))
          return;
        relay.finish(serialise(final));
      };
      run().catch((error: unknown) => {
        relay.fail(error);
        // A client that went away is not told (nor is its going away an error of the server's).
        if (!relay.gone) relay.finish(errorEvent(error));
      });
    },
    cancel(reason) {
      options.upstream.abort(reason);
      return relay.cancel(reason);
    },
  });
}
