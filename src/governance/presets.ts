import { ValidationError } from "../errors/errors.ts";
import { resolvePolicy, type GovernancePolicy, type GovernancePolicyInput } from "./policy.ts";

/** Names of the built-in presets. */
export type PresetName = "default" | "aggressive" | "minimal" | "off";

const presetInputs: Record<PresetName, GovernancePolicyInput> = {
  default: {},
  /** Small windows and cost-sensitive runs: act earlier, keep less. */
  aggressive: {
    truncateToolResultsAbove: 1_500,
    offloadProtectTokens: 5_000,
    offloadMinPrunableTokens: 5_000,
    maxTurns: 30,
    compactionTrigger: 0.6,
    tailShare: 0.15,
    summaryMaxTokens: 3_000,
    cacheAware: false,
  },
  /** Only what keeps requests valid and inside the window: compaction near the limit, pre-flight. */
  minimal: {
    stripOlderReasoning: false,
    placeholderOlderBinaries: false,
    useCompactSummaries: false,
    truncateToolResultsAbove: 0,
    offloadMinPrunableTokens: 0,
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
 * A named preset, optionally with overrides.
 *
 * @example
 * const policy = preset("aggressive", { maxTurns: 10 });
 */
export function preset(name: string, overrides: GovernancePolicyInput = {}): GovernancePolicy {
  if (!(name in presetInputs)) {
    throw new ValidationError(`unknown governance preset "${name}"; use one of ${presetNames.join(", ")}`);
  }
  return resolvePolicy({ ...presetInputs[name as PresetName], ...overrides });
}
