import type { AssistantReply } from "../upstream/assistant-reply.ts";
import type { UpstreamResponse } from "../upstream/call-upstream.ts";
import { readChatStream } from "../upstream/read-chat-stream.ts";
import { RelayEnding } from "./relay-ending.ts";

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
  const relay = new RelayEnding(options.fail);
  const failed = (reason: unknown) => errorEvent(options.errorObject(reason));
  return new ReadableStream<Uint8Array>({
    start(controller) {
      relay.attach(controller);
      const run = async () => {
        const outcome = await readChatStream(options.upstream, (event, delta) => {
          if (delta?.usageOnly === true && !options.forwardUsage) return;
          relay.send(encoder.encode(event.raw));
        });
        if (!outcome.complete) {
          relay.fail(outcome.error ?? new Error("the upstream stream ended before the reply was complete"));
          relay.finish(outcome.error === undefined && !relay.gone ? failed(undefined) : undefined);
          return;
        }
        if (!(await relay.store(() => options.complete(outcome.reply), failed))) return;
        relay.finish(encoder.encode(outcome.doneEvent?.raw ?? "data: [DONE]\n\n"));
      };
      run().catch((error: unknown) => {
        relay.fail(error);
        // A client that went away is not told (nor is its going away an error of the server's).
        if (!relay.gone) relay.finish(failed(error));
      });
    },
    cancel(reason) {
      options.upstream.abort(reason);
      return relay.cancel(reason);
    },
  });
}
