export type { SummarizeRequest, Summarizer } from "./summarizer.ts";
export {
  charEstimateCounter,
  createExtractiveSummarizer,
  type ExtractiveSummarizerOptions,
  focusTerms,
} from "./extractive-summarizer.ts";
export { latestPlan, type PlanItem, planFromText, planFromToolCall, type PlanStatus } from "./plan-state.ts";
export {
  OMISSION_NOTE_PREFIX,
  parseSnapshot,
  type ParsedSnapshot,
  renderSnapshot,
  SNAPSHOT_HEADINGS,
  type SnapshotSection,
  type SnapshotSectionKey,
} from "./snapshot-sections.ts";
