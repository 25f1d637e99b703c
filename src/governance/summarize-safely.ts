import type { SummarizeRequest } from "../summarize/summarizer.ts";
import type { ProcessorContext } from "./processor.ts";

/**
 * Runs the context's summarizer; on failure (or an empty answer) returns `fallback` instead of throwing, so a
 * failing summarizer can never break a request. An abort is passed through.
 */
export async function summarizeSafely(
  context: ProcessorContext,
  request: Omit<SummarizeRequest, "signal">,
  fallback: string,
): Promise<string> {
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
