import type { Processor } from "../processor.ts";
import { compactHistory } from "./compact-history.ts";
import { compactSettledHistory } from "./compact-settled-history.ts";
import { compressSmallHistory } from "./compress-small-history.ts";
import { replaceOlderBinaries } from "./replace-older-binaries.ts";
import { stripOlderReasoning } from "./strip-older-reasoning.ts";
import { elideOlderToolInputs } from "./elide-older-tool-inputs.ts";
import { offloadToolOutputs } from "./tool-output-offload.ts";
import { capToolResults, truncateToolResults } from "./truncate-tool-results.ts";
import { trimTurns } from "./trim-turns.ts";
import { useCompactSummaries } from "./use-compact-summaries.ts";

export {
  capToolResults,
  compactHistory,
  compactSettledHistory,
  compressSmallHistory,
  elideOlderToolInputs,
  offloadToolOutputs,
  replaceOlderBinaries,
  stripOlderReasoning,
  trimTurns,
  truncateToolResults,
  useCompactSummaries,
};

/**
 * The built-in processors in pipeline order: cheap, lossless-by-reference rewrites first, then turn trimming,
 * then summarising compaction, then the small-history fallback. Each reads its settings from the policy and
 * does nothing when they disable it.
 *
 * @example
 * createGovernor({ ...options, processors: [...defaultProcessors(), myProcessor] });
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
