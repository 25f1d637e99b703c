import type { Processor } from "../processor.ts";
import { compactHistory, compactionOptionsOf, createCompactHistory } from "./compact-history.ts";
import { compactSettledHistory, createCompactSettledHistory } from "./compact-settled-history.ts";
import { compressSmallHistory, createCompressSmallHistory } from "./compress-small-history.ts";
import { createReplaceOlderBinaries, replaceOlderBinaries } from "./replace-older-binaries.ts";
import { createStripOlderReasoning, stripOlderReasoning } from "./strip-older-reasoning.ts";
import { createElideOlderToolInputs, elideOlderToolInputs } from "./elide-older-tool-inputs.ts";
import { createOffloadToolOutputs, offloadToolOutputs } from "./tool-output-offload.ts";
import {
  capToolResults,
  createCapToolResults,
  createTruncateToolResults,
  truncateToolResults,
} from "./truncate-tool-results.ts";
import { createTrimTurns, trimTurns } from "./trim-turns.ts";
import { createUseCompactSummaries, useCompactSummaries } from "./use-compact-summaries.ts";

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
  capToolResults,
  compactHistory,
  compactionOptionsOf,
  compactSettledHistory,
  compressSmallHistory,
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
  elideOlderToolInputs,
  offloadToolOutputs,
  replaceOlderBinaries,
  stripOlderReasoning,
  trimTurns,
  truncateToolResults,
  useCompactSummaries,
};

/**
 * The built-in processors in pipeline order, each reading its settings from the policy in its context (the
 * governor's) and doing nothing when they disable it: cheap, lossless-by-reference rewrites first, then turn
 * trimming, then summarising compaction, then the small-history fallback. For a governor given a `policy`; a
 * pipeline of configured processors is `pipelineFromPolicy(policy)` or `presetPipeline(name)`.
 *
 * @example
 * createGovernor({ ...options, policy, processors: [...defaultProcessors(), myProcessor] });
 */
export function defaultProcessors(): Processor[] {
  return [
    capToolResults,
    stripOlderReasoning,
    replaceOlderBinaries,
    useCompactSummaries,
    offloadToolOutputs,
    elideOlderToolInputs,
    truncateToolResults,
    trimTurns,
    compactSettledHistory,
    compactHistory,
    compressSmallHistory,
  ];
}
