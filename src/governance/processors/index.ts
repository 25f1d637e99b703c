import { createCompactHistory } from "./compact-history.ts";
import { createCompactSettledHistory } from "./compact-settled-history.ts";
import { createCompressSmallHistory } from "./compress-small-history.ts";
import { createReplaceOlderBinaries } from "./replace-older-binaries.ts";
import { createStripOlderReasoning } from "./strip-older-reasoning.ts";
import { createElideOlderToolInputs } from "./elide-older-tool-inputs.ts";
import { createOffloadToolOutputs } from "./tool-output-offload.ts";
import { createCapToolResults, createTruncateToolResults } from "./truncate-tool-results.ts";
import { createTrimTurns } from "./trim-turns.ts";
import { createUseCompactSummaries } from "./use-compact-summaries.ts";

export type { CompactHistoryOptions } from "./compact-history.ts";
export type { CompactSettledHistoryOptions } from "./compact-settled-history.ts";
export type { CompressSmallHistoryOptions } from "./compress-small-history.ts";
export type { ReplaceOlderBinariesOptions } from "./replace-older-binaries.ts";
export type { StripOlderReasoningOptions } from "./strip-older-reasoning.ts";
export type { ElideOlderToolInputsOptions } from "./elide-older-tool-inputs.ts";
export type { OffloadToolOutputsOptions } from "./tool-output-offload.ts";
export type { CapToolResultsOptions, TruncateToolResultsOptions } from "./truncate-tool-results.ts";
export type { TrimTurnsOptions } from "./trim-turns.ts";
export type { UseCompactSummariesOptions } from "./use-compact-summaries.ts";

export {
  createCapToolResults,
  createCompactHistory,
  createCompactSettledHistory,
  createCompressSmallHistory,
  createElideOlderToolInputs,
  createOffloadToolOutputs,
  createReplaceOlderBinaries,
  createStripOlderReasoning,
  createTrimTurns,
  createTruncateToolResults,
  createUseCompactSummaries,
};
