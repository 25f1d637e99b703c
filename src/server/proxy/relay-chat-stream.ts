import type { AssistantReply } from "../upstream/assistant-reply.ts";
import type { UpstreamResponse } from "../upstream/call-upstream.ts";
import { readChatStream } from "../upstream/read-chat-stream.ts";
import { relayStream } from "./relay-stream.ts";

/** Options of `relayChatStream`. */
export interface RelayOptions {
  readonly upstream: UpstreamResponse;
  /** Forward the usage-only chunk (the client asked for `stream_options.include_usage`). */
  readonly forwardUsage: boolean;
  /** Stores the whole reply; runs before `[DONE]` is forwarded. A rejection is sent as an error event. */
  readonly complete: (reply: AssistantReply) => Promise<unknown>;
  /**
   * Runs once when the stream fails, is cut short, or the client goes away before the reply is being stored:
   * nothing was stored. A client that goes away while it is being stored does not fail the request.
   */
  readonly fail: (reason: unknown) => void;
  /** Turns a failure into the `{ error }` object sent as the last event. */
  readonly errorObject: (reason: unknown) => unknown;
}

const encoder = new TextEncoder();

function errorEvent(error: unknown): Uint8Array {
  return encoder.encode(`data: ${JSON.stringify({ error })}\n\n`);
}

/**
 * The client's side of a proxied stream: the upstream's SSE events forwarded byte for byte as they arrive
 * (except the usage-only chunk the proxy asked for on its own), the reply stored before `[DONE]` is sent, and
 * an OpenAI-style `{ error }` event instead of `[DONE]` when the stream breaks or storing fails.
 *
 * @example
 * return new Response(relayChatStream({ upstream, forwardUsage, complete, fail, errorObject }), { headers });
 */
export function relayChatStream(options: RelayOptions): ReadableStream<Uint8Array> {
  return relayStream({
    ...options,
    errorEvent: (reason) => errorEvent(options.errorObject(reason)),
    read: async (send) => {
      const outcome = await readChatStream(options.upstream, (event, delta) => {
        if (delta?.usageOnly === true && !options.forwardUsage) return;
        send(encoder.encode(event.raw));
      });
      if (!outcome.complete)
        return {
          complete: false,
          error: outcome.error,
          cutShort: "the upstream stream ended before the reply was complete",
        };
      return {
        complete: true,
        reply: () => outcome.reply,
        last: encoder.encode(outcome.doneEvent?.raw ?? "data: [DONE]\n\n"),
      };
    },
  });
}
