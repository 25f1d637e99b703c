/**
 * `ctxkit/summarize`: summarizers (extractive, LLM) and the structured snapshot their summaries follow.
 */
export type { SummarizeRequest, Summarizer, SummarizerPrice } from "./summarizer.ts";
export { createExtractiveSummarizer, type ExtractiveSummarizerOptions } from "./extractive-summarizer.ts";
export { createLlmSummarizer, type LlmSummarizerOptions } from "./llm-summarizer.ts";
export { type PlanItem, type PlanStatus } from "./plan-state.ts";
export {
  parseSnapshot,
  type ParsedSnapshot,
  type SnapshotSection,
  type SnapshotSectionKey,
} from "./snapshot-sections.ts";
export { SUMMARY_SYSTEM_PROMPT } from "./summary-prompts.ts";
