import type { AssistantReply } from "../upstream/assistant-reply.ts";
import type { UpstreamResponse } from "../upstream/call-upstream.ts";
import { readChatStream } from "../upstream/read-chat-stream.ts";

/** Options of `relayChatStream`. */
export interface RelayOptions {
  readonly upstream: UpstreamResponse;
  /** Forward the usage-only chunk (the client asked for `stream_options.include_usage`). */
  readonly forwardUsage: boolean;
  /** Stores the whole reply; runs before `[DONE]` is forwarded. A rejection is sent as an error event. */
  readonly complete: (reply: AssistantReply) => Promise<void>;
  /** Runs once when the stream fails, is cut short, or the client goes away: nothing was stored. */
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
  let settled = false;
  const fail = (reason: unknown) => {
    if (settled) return;
    settled = true;
    options.fail(reason);
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const run = async () => {
        const outcome = await readChatStream(options.upstream, (event, delta) => {
          if (delta?.usageOnly === true && !options.forwardUsage) return;
          controller.enqueue(encoder.encode(event.raw));
        });
        if (!outcome.complete) {
          fail(outcome.error ?? new Error("the upstream stream ended before the reply was complete"));
          if (outcome.error === undefined) controller.enqueue(errorEvent(options.errorObject(undefined)));
          controller.close();
          return;
        }
        try {
          await options.complete(outcome.reply);
          settled = true;
        } catch (error) {
          fail(error);
          controller.enqueue(errorEvent(options.errorObject(error)));
          controller.close();
          return;
        }
        controller.enqueue(encoder.encode(outcome.doneEvent?.raw ?? "data: [DONE]\n\n"));
        controller.close();
      };
      run().catch((error: unknown) => {
        fail(error);
        try {
          controller.enqueue(errorEvent(options.errorObject(error)));
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
