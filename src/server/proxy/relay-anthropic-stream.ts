import type { AssistantReply } from "../upstream/assistant-reply.ts";
import type { UpstreamResponse } from "../upstream/call-upstream.ts";
import { SseEventSplitter, type RawSseEvent } from "../upstream/sse-event-splitter.ts";
import { AnthropicStreamAccumulator, replyFromAnthropic } from "./anthropic-reply.ts";

/** Options of `relayAnthropicStream`. */
export interface AnthropicRelayOptions {
  readonly upstream: UpstreamResponse;
  /** Stores the whole reply; runs before `message_stop` is forwarded. A rejection is sent as an error event. */
  readonly complete: (reply: AssistantReply) => Promise<void>;
  /** Runs once when the stream fails, is cut short, or the client goes away: nothing was stored. */
  readonly fail: (reason: unknown) => void;
  /** Turns a failure into Anthropic's `{ type, message }` error object for the `error` event sent last. */
  readonly errorObject: (reason: unknown) => { type: string; message: string };
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
  let settled = false;
  const fail = (reason: unknown) => {
    if (settled) return;
    settled = true;
    options.fail(reason);
  };
  const errorEvent = (reason: unknown) =>
    encoder.encode(
      `event: error\ndata: ${JSON.stringify({ type: "error", error: options.errorObject(reason) })}\n\n`,
    );
  return new ReadableStream<Uint8Array>({
    start(controller) {
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
          controller.enqueue(encoder.encode(event.raw));
        };
        for await (const chunk of upstream.chunks()) {
          for (const event of splitter.push(chunk)) handle(event);
        }
        const tail = splitter.end();
        if (tail !== undefined) handle(tail);
        if (stop === undefined || failed !== undefined) {
          fail(failed ?? new Error("the upstream stream ended before the message was complete"));
          if (failed === undefined) controller.enqueue(errorEvent(undefined));
          controller.close();
          return;
        }
        try {
          await options.complete(replyFromAnthropic(accumulator.message()));
          settled = true;
        } catch (error) {
          fail(error);
          controller.enqueue(errorEvent(error));
          controller.close();
          return;
        }
        controller.enqueue(encoder.encode(stop.raw));
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
