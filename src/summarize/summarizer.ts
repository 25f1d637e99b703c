import type { Message } from "../model/message.ts";

/** What a summarizer is asked to do. */
export interface SummarizeRequest {
  /** The messages to summarise, in order (tool calls with their results). */
  readonly messages: readonly Message[];
  /** The summary these messages follow; when present the result must update it, not start over. */
  readonly previousSummary?: string;
  /** Optional focus given by the user (`/compact focus on the parser`). */
  readonly focus?: string;
  /** Upper bound for the summary's size, in tokens. */
  readonly maxTokens: number;
  readonly signal?: AbortSignal;
}

/**
 * What one summary costs, per token, in units of the governed model's uncached input price: the tokens the
 * summarizer reads and the tokens it writes.
 */
export interface SummarizerPrice {
  readonly input: number;
  readonly output: number;
}

/**
 * Turns a range of messages into one text that can stand in their place. Implementations: the offline
 * extractive summarizer (deterministic, no model) and the LLM summarizer over any AI SDK language model.
 */
export interface Summarizer {
  /** Stable name for events and reports, e.g. `extractive` or `llm:openai:gpt-4.1-mini`. */
  readonly name: string;
  /**
   * What its summaries cost; governance weighs it before an optional compaction. Undefined: free (offline, like
   * the extractive summarizer).
   */
  readonly price?: SummarizerPrice;
  summarize(request: SummarizeRequest): Promise<string>;
}
