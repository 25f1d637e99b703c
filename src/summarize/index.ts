export type { SummarizeRequest, Summarizer, SummarizerPrice } from "./summarizer.ts";
export {
  charEstimateCounter,
  createExtractiveSummarizer,
  type ExtractiveSummarizerOptions,
  focusTerms,
} from "./extractive-summarizer.ts";
export {
  createLlmSummarizer,
  languageModelName,
  type LlmSummarizerOptions,
  unwrapSnapshot,
} from "./llm-summarizer.ts";
export { latestPlan, type PlanItem, planFromText, planFromToolCall, type PlanStatus } from "./plan-state.ts";
export {
  clipMiddle,
  neutraliseFrameTags,
  renderTranscriptMessage,
  type TranscriptLimits,
  transcriptParts,
} from "./render-transcript.ts";
export {
  mergeSnapshots,
  OMISSION_NOTE_PREFIX,
  parseSnapshot,
  type ParsedSnapshot,
  renderSnapshot,
  SNAPSHOT_HEADINGS,
  type SnapshotSection,
  type SnapshotSectionKey,
} from "./snapshot-sections.ts";
export { summarizeRequestSchema, trimmedMarker } from "./summarize-request-schema.ts";
export {
  LLM_SNAPSHOT_SECTIONS,
  snapshotPrompt,
  SUMMARY_SYSTEM_PROMPT,
  type SummaryPromptInput,
  verifyPrompt,
} from "./summary-prompts.ts";
