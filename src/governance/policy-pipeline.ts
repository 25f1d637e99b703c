// The one place a governance policy (what users and the CLI write) becomes a pipeline (what the governor runs).
import type { GovernancePipeline } from "./pipeline.ts";
import { withTriggers } from "./pipeline.ts";
import { resolvePolicy, type GovernancePolicy, type GovernancePolicyInput } from "./policy.ts";
import type { Processor, ProcessorTrigger } from "./processor.ts";
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
 * The pipeline a policy describes: the built-in processors it turns on, configured from it, in pipeline order —
 * cap, strip older reasoning, replace older binaries, compact summaries, offload, elide older tool-call arguments,
 * truncate, trim turns, summarise settled history, compact at the trigger, small-history fallback — with the
 * policy as the governor settings. A feature the policy disables (0 or `false`) is left out.
 *
 * Given `processors` (a governor's `processors` option, the pipeline users assembled before processors declared
 * triggers), those run at checkpoints instead of the policy's, in their order; a processor of theirs that
 * declares no triggers runs when the policy's thresholds say, and the policy's cap on new tool results, its
 * compaction on overflow and on `/compact` still run around them.
 *
 * @example
 * const pipeline = pipelineFromPolicy({ compactionTrigger: 0.7, maxTurns: 30 });
 * pipeline.processors.map((processor) => processor.name); // ["cap-tool-results", …, "compress-small-history"]
 */
export function pipelineFromPolicy(
  input: GovernancePolicy | GovernancePolicyInput = {},
  processors?: readonly Processor[],
): GovernancePipeline {
  const policy = resolvePolicy(input);
  if (processors === undefined) return { processors: policyProcessors(policy), settings: policy };
  const triggers = policyCheckpointTriggers(policy);
  return {
    processors: [
      ...processors.map((processor) =>
        processor.triggers === undefined ? withTriggers(processor, triggers) : processor,
      ),
      ...policyStages(policy),
    ],
    settings: policy,
  };
}

function policyProcessors(policy: GovernancePolicy): Processor[] {
  const headShare = policy.truncationHeadShare;
  const compacts = policy.compactionTrigger > 0;
  return [
    ...(policy.toolResultCapShare > 0
      ? [createCapToolResults({ capShare: policy.toolResultCapShare, headShare })]
      : []),
    ...(policy.stripOlderReasoning ? [createStripOlderReasoning()] : []),
    ...(policy.placeholderOlderBinaries ? [createReplaceOlderBinaries()] : []),
    ...(policy.useCompactSummaries ? [createUseCompactSummaries()] : []),
    ...(policy.offloadMinPrunableTokens > 0
      ? [
          createOffloadToolOutputs({
            minPrunableTokens: policy.offloadMinPrunableTokens,
            previewLines: policy.offloadPreviewLines,
          }),
        ]
      : []),
    ...(policy.elideToolInputsAbove > 0
      ? [createElideOlderToolInputs({ aboveTokens: policy.elideToolInputsAbove })]
      : []),
    ...(policy.truncateToolResultsAbove > 0
      ? [createTruncateToolResults({ aboveTokens: policy.truncateToolResultsAbove, headShare })]
      : []),
    ...(policy.maxTurns > 0 ? [createTrimTurns({ maxTurns: policy.maxTurns })] : []),
    ...(policy.compactSettledHistory && compacts ? [createCompactSettledHistory()] : []),
    ...(compacts ? [createCompactHistory(compactionOptionsOf(policy))] : []),
    ...(compacts && policy.smallHistoryTurns > 0
      ? [
          createCompressSmallHistory({
            belowTurns: policy.smallHistoryTurns,
            trigger: policy.compactionTrigger,
          }),
        ]
      : []),
  ];
}

/** Every checkpoint trigger the policy's processors declare (for processors given without their own). */
function policyCheckpointTriggers(policy: GovernancePolicy): ProcessorTrigger[] {
  return [
    { kind: "checkpoint" },
    ...policyProcessors(policy).flatMap((processor) =>
      (processor.triggers ?? []).filter(
        (trigger) => trigger.kind !== "checkpoint" && !STAGES.has(trigger.kind),
      ),
    ),
  ];
}

const STAGES: ReadonlySet<ProcessorTrigger["kind"]> = new Set(["each-message", "overflow", "user-request"]);

/**
 * The policy's processors for the stages around a given pipeline — each new tool result capped, compaction on
 * overflow and on `/compact` — reduced to those stages (they do not join the checkpoint fold).
 */
function policyStages(policy: GovernancePolicy): Processor[] {
  return policyProcessors(policy).flatMap((processor) => {
    const stages = (processor.triggers ?? []).filter((trigger) => STAGES.has(trigger.kind));
    return stages.length === 0 ? [] : [withTriggers(processor, stages)];
  });
}
