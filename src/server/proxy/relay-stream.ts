import type { AssistantReply } from "../upstream/assistant-reply.ts";
import type { UpstreamResponse } from "../upstream/call-upstream.ts";
import { RelayEnding } from "./relay-ending.ts";

/** How reading an upstream stream ended: a whole reply and the last event held back, or cut short. */
export type RelayOutcome =
  | {
      readonly complete: true;
      /** The reply to store (made when it is stored: a failure to make it fails the store). */
      readonly reply: () => AssistantReply;
      /** The event that ends the stream, sent once the reply is stored. */
      readonly last: Uint8Array;
    }
  | {
      readonly complete: false;
      /** The error the upstream sent in its stream; undefined when the stream just ended too soon. */
      readonly error: unknown;
      /** What went wrong when the stream just ended too soon. */
      readonly cutShort: string;
    };

/** Options of `relayStream`: what every format's relay has in common, and its `read`. */
export interface RelayStreamOptions {
  readonly upstream: UpstreamResponse;
  /** Stores the whole reply; runs before the last event is forwarded. A rejection is sent as an error event. */
  readonly complete: (reply: AssistantReply) => Promise<unknown>;
  /**
   * Runs once when the stream fails, is cut short, or the client goes away before the reply is being stored:
   * nothing was stored. A client that goes away while it is being stored does not fail the request.
   */
  readonly fail: (reason: unknown) => void;
  /** The format's error event, sent last when the stream fails (`undefined`: it ended too soon). */
  readonly errorEvent: (reason: unknown) => Uint8Array;
  /** Reads the upstream's stream, forwarding what the client gets as it arrives with `send`. */
  readonly read: (send: (bytes: Uint8Array) => void) => Promise<RelayOutcome>;
}

/**
 * The client's side of a proxied stream, whatever its format: `read` forwards the upstream's events as they arrive
 * and holds the last one back; the reply is stored before that one is sent, and the format's error event ends the
 * stream instead when the upstream breaks off, fails, or storing fails (see `RelayEnding`).
 *
 * @example
 * return eventStream(relayStream({ upstream, complete, fail, errorEvent, read }), headers);
 */
export function relayStream(options: RelayStreamOptions): ReadableStream<Uint8Array> {
  const relay = new RelayEnding(options.fail);
  const { errorEvent } = options;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      relay.attach(controller);
      const run = async () => {
        const outcome = await options.read((bytes) => relay.send(bytes));
        if (!outcome.complete) {
          relay.fail(outcome.error ?? new Error(outcome.cutShort));
          relay.finish(outcome.error === undefined && !relay.gone ? errorEvent(undefined) : undefined);
          return;
        }
        if (!(await relay.store(() => options.complete(outcome.reply()), errorEvent))) return;
        relay.finish(outcome.last);
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
