import { ValidationError } from "../errors/errors.ts";
import type { GovernancePipeline } from "./pipeline.ts";
import { presetPipelineOf } from "./preset-pipeline.ts";
import { resolvePresetOptions, type PresetOptions, type PresetOptionsInput } from "./preset-options.ts";

/** Names of the built-in presets. */
export type PresetName = "default" | "aggressive" | "minimal" | "off";

const presetInputs: Record<PresetName, PresetOptionsInput> = {
  default: {},
  /**
   * Small windows and cost-sensitive runs: nothing beyond the newest step is protected, a piece of context stays
   * verbatim only while the chance the next reply uses it is at least 10% instead of 2% (more re-reads: on the
   * bench's real sessions about 1% of the spans replies use are missing, against 0.6%, and about 5% of the edit
   * anchors), offloaded outputs keep shorter previews, older turns go sooner. Checkpoints stay cache-aware:
   * taking ones that do not pay only raises the cost.
   */
  aggressive: {
    offloadProtectTokens: 0,
    offloadMinPrunableTokens: 2_000,
    groundingTarget: 0.9,
    offloadPreviewLines: 2,
    elideToolInputsAbove: 100,
    truncateToolResultsAbove: 1_500,
    maxTurns: 30,
    compactionTrigger: 0.7,
    tailShare: 0.15,
    neededShare: 0,
  },
  /** Only what keeps requests valid and inside the window: compaction near the limit, pre-flight. */
  minimal: {
    stripOlderReasoning: false,
    placeholderOlderBinaries: false,
    useCompactSummaries: false,
    truncateToolResultsAbove: 0,
    offloadMinPrunableTokens: 0,
    elideToolInputsAbove: 0,
    compactSettledHistory: false,
    groundingTarget: 0,
    compactionTrigger: 0.95,
    budgetExitShare: 0,
    loopRepeatThreshold: 0,
    loopCycleRepeats: 0,
  },
  /** No governance at all (orphan repair still runs so the payload stays valid). */
  off: {
    stripOlderReasoning: false,
    placeholderOlderBinaries: false,
    useCompactSummaries: false,
    truncateToolResultsAbove: 0,
    offloadMinPrunableTokens: 0,
    elideToolInputsAbove: 0,
    compactSettledHistory: false,
    groundingTarget: 0,
    maxTurns: 0,
    compactionTrigger: 0,
    smallHistoryTurns: 0,
    preflight: false,
    budgetExitShare: 0,
    toolResultCapShare: 0,
    loopRepeatThreshold: 0,
    loopCycleRepeats: 0,
  },
};

/** The names of every preset. */
export const presetNames = Object.keys(presetInputs) as PresetName[];

/**
 * A named preset as the pipeline it assembles: the built-in processors it turns on, each configured by its factory
 * from the preset's knobs (with `overrides`, flat: `{ maxTurns: 10 }`), and the governor's settings. Throws
 * `ValidationError` for an unknown name or bad overrides.
 *
 * @example
 * const pipeline = preset("aggressive", { maxTurns: 10 });
 * const engine = await createContextEngine({ store, model, pipeline });
 */
export function preset(name: string, overrides: PresetOptionsInput = {}): GovernancePipeline {
  return presetPipelineOf(presetOptions(name, overrides));
}

/**
 * The knobs of a named preset with `overrides` applied, every default filled in (what `ctxkit config list` shows).
 * Throws `ValidationError` for an unknown name or bad overrides.
 *
 * @example
 * presetOptions("aggressive").maxTurns; // 30
 */
export function presetOptions(name: string, overrides: PresetOptionsInput = {}): PresetOptions {
  if (!(name in presetInputs)) {
    throw new ValidationError(`unknown governance preset "${name}"; use one of ${presetNames.join(", ")}`);
  }
  return resolvePresetOptions({ ...presetInputs[name as PresetName], ...overrides });
}
