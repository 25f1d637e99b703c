import type { SummarizeRequest } from "../summarize/summarizer.ts";
import type { ProcessorContext } from "./processor.ts";

/**
 * Runs the context's summarizer; on failure (or an empty answer) returns `fallback` instead of throwing, so a
 * failing summarizer can never break a request — and emits a `summarizer-failed` event saying why, so the failure
 * is seen (logs, metrics, the inspector) rather than silently turned into a marker. An abort is passed through.
 * Pass `undefined` as the fallback to learn that it failed.
 */
export async function summarizeSafely<Fallback extends string | undefined>(
  context: ProcessorContext,
  request: Omit<SummarizeRequest, "signal">,
  fallback: Fallback,
): Promise<string | Fallback> {
  try {
    const summary = await context.summarizer.summarize({
      ...request,
      ...(context.signal !== undefined && { signal: context.signal }),
    });
    if (summary.trim() !== "") return summary;
    return failed(context, "the summarizer answered with an empty summary", fallback);
  } catch (error) {
    if (context.signal?.aborted) throw error;
    return failed(context, error instanceof Error ? error.message : String(error), fallback);
  }
}

function failed<Fallback extends string | undefined>(
  context: ProcessorContext,
  reason: string,
  fallback: Fallback,
): Fallback {
  context.emit({
    type: "summarizer-failed",
    reason: reason.length > 300 ? `${reason.slice(0, 297)}...` : reason,
    fallback: fallback === undefined ? "none" : "marker",
    tokensBefore: 0,
    tokensAfter: 0,
    messageIds: [],
  });
  return fallback;
}
