import type { SummarizeRequest } from "../summarize/summarizer.ts";
import type { ProcessorContext } from "./processor.ts";

/**
 * Runs the context's summarizer; on failure (or an empty answer) returns `fallback` instead of throwing, so a
 * failing summarizer can never break a request. An abort is passed through. Pass `undefined` as the fallback
 * to learn that it failed.
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
    return summary.trim() === "" ? fallback : summary;
  } catch (error) {
    if (context.signal?.aborted) throw error;
    return fallback;
  }
}
