import type { AssistantReply } from "./assistant-reply.ts";
import type { UpstreamResponse } from "./call-upstream.ts";
import { ChatStreamAccumulator, type ChunkDelta } from "./chat-stream-accumulator.ts";
import { sseEvents, type RawSseEvent } from "./sse-event-splitter.ts";

/** How an upstream stream ended. */
export interface ChatStreamOutcome {
  readonly reply: AssistantReply;
  /** True when the stream said `[DONE]` or gave a finish reason: the reply is whole. */
  readonly complete: boolean;
  /** The `[DONE]` event as received (held back so the caller can store the reply before sending it). */
  readonly doneEvent: RawSseEvent | undefined;
  /** An `error` object the upstream sent inside the stream. */
  readonly error: unknown;
}

/**
 * Reads a streamed chat completion event by event: each event (but `[DONE]`) is handed to `onEvent` with what
 * it added to the reply, and the whole reply is rebuilt. Rejects when the body fails (the caller's idle timer
 * or the client aborting cancel it).
 *
 * @example
 * const outcome = await readChatStream(upstream, async (event) => controller.enqueue(encode(event.raw)));
 */
export async function readChatStream(
  upstream: UpstreamResponse,
  onEvent: (event: RawSseEvent, delta: ChunkDelta | undefined) => void | Promise<void>,
): Promise<ChatStreamOutcome> {
  const accumulator = new ChatStreamAccumulator();
  let doneEvent: RawSseEvent | undefined;
  let finished = false;
  let error: unknown;
  const handle = async (event: RawSseEvent) => {
    if (event.data?.trim() === "[DONE]") {
      doneEvent = event;
      return;
    }
    let delta: ChunkDelta | undefined;
    if (event.data !== undefined) {
      try {
        delta = accumulator.add(JSON.parse(event.data));
      } catch {
        delta = undefined;
      }
      if (delta?.error !== undefined && delta.error !== null) error = delta.error;
    }
    if (accumulator.finishReason !== undefined) finished = true;
    await onEvent(event, delta);
  };
  for await (const event of sseEvents(upstream.chunks())) await handle(event);
  return {
    reply: accumulator.reply(),
    complete: error === undefined && (doneEvent !== undefined || finished),
    doneEvent,
    error,
  };
}
