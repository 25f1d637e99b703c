import type { SummarizeRequest } from "../summarize/summarizer.ts";
import type { ProcessorContext } from "./processor.ts";

/** The static marker used when no summary could be made (co-cli's fallback). */
export function staticMarker(messageCount: number): string {
  return `[Earlier conversation trimmed — ${messageCount} messages removed to stay within context budget]`;
}

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
