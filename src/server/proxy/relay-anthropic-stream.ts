import type { AssistantReply } from "../upstream/assistant-reply.ts";
import type { UpstreamResponse } from "../upstream/call-upstream.ts";
import { eventObject, sseEvents, type RawSseEvent } from "../upstream/sse-event-splitter.ts";
import { AnthropicStreamAccumulator, replyFromAnthropic } from "./anthropic-reply.ts";
import { relayStream } from "./relay-stream.ts";

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

/**
 * The client's side of a proxied Anthropic Messages stream: the upstream's events forwarded as they arrive, byte
 * for byte, while the reply is rebuilt; the reply is stored before `message_stop` is sent, and an `error` event
 * ends the stream instead when the upstream breaks off, fails, or storing fails.
 *
 * @example
 * return new Response(relayAnthropicStream({ upstream, complete, fail, errorObject }), { headers });
 */
export function relayAnthropicStream(options: AnthropicRelayOptions): ReadableStream<Uint8Array> {
  return relayStream({
    ...options,
    errorEvent: (reason) =>
      encoder.encode(
        `event: error\ndata: ${JSON.stringify({ type: "error", error: options.errorObject(reason) })}\n\n`,
      ),
    read: async (send) => {
      const accumulator = new AnthropicStreamAccumulator();
      let stop: RawSseEvent | undefined;
      let failed: unknown;
      for await (const event of sseEvents(options.upstream.chunks())) {
        const data = eventObject(event);
        if (data?.["type"] === "message_stop") {
          stop = event;
          continue;
        }
        if (data?.["type"] === "error") failed ??= data;
        else if (data !== undefined) accumulator.push(data);
        send(encoder.encode(event.raw));
      }
      if (stop === undefined || failed !== undefined)
        return {
          complete: false,
          error: failed,
          cutShort: "the upstream stream ended before the message was complete",
        };
      return {
        complete: true,
        reply: () => replyFromAnthropic(accumulator.message()),
        last: encoder.encode(stop.raw),
      };
    },
  });
}
