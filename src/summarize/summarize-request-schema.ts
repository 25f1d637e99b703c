import { z } from "zod";

/**
 * Validates a `SummarizeRequest` at a summarizer's boundary (the messages are checked for shape only; they come
 * from a store or a conversation that validated them already).
 *
 * @example
 * validate(summarizeRequestSchema, request, "summarize request");
 */
export const summarizeRequestSchema = z.object({
  messages: z.array(z.object({ seq: z.number(), content: z.array(z.unknown()) }).loose()),
  maxTokens: z.number().int().positive(),
  previousSummary: z.string().optional(),
  focus: z.string().optional(),
});

/**
 * The marker that stands in for a range no summarizer could summarise (co-cli's fallback), so the model at least
 * knows that history is missing.
 *
 * @example
 * trimmedMarker(12) // "[Earlier conversation trimmed — 12 messages removed to stay within context budget]"
 */
export function trimmedMarker(messageCount: number): string {
  return `[Earlier conversation trimmed — ${messageCount} messages removed to stay within context budget]`;
}
