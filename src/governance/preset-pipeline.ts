// The one place a preset's flat knobs (what the settings file and the CLI write) become a pipeline.
import type { GovernancePipeline } from "./pipeline.ts";
import type { GovernorSettings } from "./governor-settings.ts";
import { resolvePresetOptions, type PresetOptions, type PresetOptionsInput } from "./preset-options.ts";
import type { Processor } from "./processor.ts";
import { createCompactHistory, compactionOptionsOf } from "./processors/compact-history.ts";
import { createCompactSettledHistory } from "./processors/compact-settled-history.ts";
import { createCompressSmallHistory } from "./processors/compress-small-history.ts";
import { createElideOlderToolInputs } from "./processors/elide-older-tool-inputs.ts";
import { createReplaceOlderBinaries } from "./processors/replace-older-binaries.ts";
import { createStripOlderReasoning } from "./processors/strip-older-reasoning.ts";
import { createOffloadToolOutputs } from "./processors/tool-output-offload.ts";
import { createTrimTurns } from "./processors/trim-turns.ts";
import { createCapToolResults, createTruncateToolResults } from "./processors/truncate-tool-results.ts";
import { createUseCompactSummaries } from "./processors/use-compact-summaries.ts";

/**
 * The pipeline a preset's knobs describe: the built-in processors they turn on, each made by its factory from its
 * own knobs, in pipeline order — cap, strip older reasoning, replace older binaries, compact summaries, offload,
 * elide older tool-call arguments, truncate, trim turns, summarise settled history, compact at the trigger,
 * small-history fallback — and the governor's settings. A processor the knobs disable (0 or `false`) is left out.
 *
 * @example
 * const pipeline = presetPipelineOf({ compactionTrigger: 0.7, maxTurns: 30 });
 * pipeline.processors.map((processor) => processor.name); // ["cap-tool-results", …, "compress-small-history"]
 */
export function presetPipelineOf(input: PresetOptions | PresetOptionsInput = {}): GovernancePipeline {
  const options = resolvePresetOptions(input);
  return { processors: presetProcessors(options), settings: governorSettingsOf(options) };
}

function presetProcessors(options: PresetOptions): Processor[] {
  const headShare = options.truncationHeadShare;
  const compacts = options.compactionTrigger > 0;
  return [
    ...(options.toolResultCapShare > 0
      ? [createCapToolResults({ capShare: options.toolResultCapShare, headShare })]
      : []),
    ...(options.stripOlderReasoning ? [createStripOlderReasoning()] : []),
    ...(options.placeholderOlderBinaries ? [createReplaceOlderBinaries()] : []),
    ...(options.useCompactSummaries ? [createUseCompactSummaries()] : []),
    ...(options.offloadMinPrunableTokens > 0
      ? [
          createOffloadToolOutputs({
            minPrunableTokens: options.offloadMinPrunableTokens,
            previewLines: options.offloadPreviewLines,
          }),
        ]
      : []),
    ...(options.elideToolInputsAbove > 0
      ? [createElideOlderToolInputs({ aboveTokens: options.elideToolInputsAbove })]
      : []),
    ...(options.truncateToolResultsAbove > 0
      ? [createTruncateToolResults({ aboveTokens: options.truncateToolResultsAbove, headShare })]
      : []),
    ...(options.maxTurns > 0 ? [createTrimTurns({ maxTurns: options.maxTurns })] : []),
    ...(options.compactSettledHistory && compacts
      ? [
          createCompactSettledHistory({
            summaryMaxTokens: options.summaryMaxTokens,
            retryShare: options.inflationRetryShare,
            dialogueTurns: options.minTailTurns,
          }),
        ]
      : []),
    ...(compacts ? [createCompactHistory(compactionOptionsOf(options))] : []),
    ...(compacts && options.smallHistoryTurns > 0
      ? [
          createCompressSmallHistory({
            belowTurns: options.smallHistoryTurns,
            trigger: options.compactionTrigger,
          }),
        ]
      : []),
  ];
}

/** The knobs that configure the governor itself (and what its processors share). */
function governorSettingsOf(options: PresetOptions): GovernorSettings {
  return {
    protectTokens: options.offloadProtectTokens,
    batchTokens: options.offloadMinPrunableTokens,
    groundingTarget: options.groundingTarget,
    ...(options.reuseRates !== undefined && { reuseRates: options.reuseRates }),
    reuseRatesWeight: options.reuseRatesWeight,
    tailShare: options.tailShare,
    neededShare: options.neededShare,
    truncationHeadShare: options.truncationHeadShare,
    preflight: options.preflight,
    budgetExitShare: options.budgetExitShare,
    loopRepeatThreshold: options.loopRepeatThreshold,
    loopCycleRepeats: options.loopCycleRepeats,
    cacheAware: options.cacheAware,
    pricing: options.pricing,
    cacheTtl: options.cacheTtl,
  };
}
