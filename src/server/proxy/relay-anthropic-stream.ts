import type { AssistantReply } from "../upstream/assistant-reply.ts";
import type { UpstreamResponse } from "../upstream/call-upstream.ts";
import { SseEventSplitter, type RawSseEvent } from "../upstream/sse-event-splitter.ts";
import { AnthropicStreamAccumulator, replyFromAnthropic } from "./anthropic-reply.ts";
import { RelayEnding } from "./relay-ending.ts";

/** Options of `relayAnthropicStream`. */
export interface AnthropicRelayOptions {
  readonly upstream: UpstreamResponse;
  /** Stores the whole reply; runs before `message_stop` is forwarded. A rejection is sent as an error event. */
  readonly complete: (reply: AssistantReply) => Promise<unknown>;
  /**
   * Runs once when the stream fails, is cut short, or the client goes away before the reply is being stored:
   * nothing was stored. A client that goes away while it is being stored does not fail the request.
   */
  readonly fail: (reason: unknown) => void;
  /** Turns a failure into Anthropic's `{ type, message }` error object (with ctxkit's `code`) for the `error` event sent last. */
  readonly errorObject: (reason: unknown) => { type: string; message: string; code: string };
}

const encoder = new TextEncoder();

function parse(event: RawSseEvent): Record<string, unknown> | undefined {
  if (event.data === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(event.data);
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The client's side of a proxied Anthropic Messages stream: the upstream's events forwarded as they arrive, byte
 * for byte, while the reply is rebuilt; the reply is stored before `message_stop` is sent, and an `error` event
 * ends the stream instead when the upstream breaks off, fails, or storing fails.
 *
 * @example
 * return new Response(relayAnthropicStream({ upstream, complete, fail, errorObject }), { headers });
 */
export function relayAnthropicStream(options: AnthropicRelayOptions): ReadableStream<Uint8Array> {
  const relay = new RelayEnding(options.fail);
  const errorEvent = (reason: unknown) =>
    encoder.encode(
      `event: error\ndata: ${JSON.stringify({ type: "error", error: options.errorObject(reason) })}\n\n`,
    );
  return new ReadableStream<Uint8Array>({
    start(controller) {
      relay.attach(controller);
      const run = async () => {
        const upstream = options.upstream;
        const splitter = new SseEventSplitter();
        const accumulator = new AnthropicStreamAccumulator();
        let stop: RawSseEvent | undefined;
        let failed: unknown;
        const handle = (event: RawSseEvent) => {
          const data = parse(event);
          if (data?.["type"] === "message_stop") {
            stop = event;
            return;
          }
          if (data?.["type"] === "error") failed ??= data;
          else if (data !== undefined) accumulator.push(data);
          relay.send(encoder.encode(event.raw));
        };
        for await (const chunk of upstream.chunks()) {
          for (const event of splitter.push(chunk)) handle(event);
        }
        const tail = splitter.end();
        if (tail !== undefined) handle(tail);
        if (stop === undefined || failed !== undefined) {
          relay.fail(failed ?? new Error("the upstream stream ended before the message was complete"));
          relay.finish(failed === undefined && !relay.gone ? errorEvent(undefined) : undefined);
          return;
        }
        const last = stop;
        if (
          !(await relay.store(() => options.complete(replyFromAnthropic(accumulator.message())), errorEvent))
        )
          return;
        relay.finish(encoder.encode(last.raw));
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
