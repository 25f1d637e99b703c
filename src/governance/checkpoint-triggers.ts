import { runsAtCheckpoints, declaredTriggers, stageProcessors } from "./pipeline.ts";
import type { Processor } from "./processor.ts";

/** A pipeline's processors sorted by when they run, and the checkpoint triggers they declare. */
export interface PipelineSchedule {
  /** Run in order at every checkpoint. */
  readonly fold: readonly Processor[];
  /** Those of the fold that prepare work ahead on every request (`prepareAhead`). */
  readonly ahead: readonly Processor[];
  /** Run on each new message, when a request would overflow, on a user's `/compact`. */
  readonly onMessage: readonly Processor[];
  readonly onOverflow: readonly Processor[];
  readonly onUserRequest: readonly Processor[];
  /** Payload shares of the usable window past which a checkpoint is mandatory. */
  readonly payloadShares: readonly number[];
  /** User turns and messages in view past which a checkpoint is mandatory. */
  readonly turnCounts: readonly number[];
  readonly messageCounts: readonly number[];
  /** Tool traffic past the protection window that makes an optional checkpoint worth considering. */
  readonly toolOutput: readonly { readonly tokens: number; readonly windowShare?: number }[];
  /** Whether enough settled history makes an optional checkpoint worth considering. */
  readonly settledHistory: boolean;
  /** Tool-call arguments above this many tokens count as tool traffic (0: none do). */
  readonly inputsAbove: number;
}

/**
 * Sorts a pipeline's processors by their triggers (see `ProcessorTrigger`); thresholds of 0 are left out.
 *
 * @example
 * pipelineSchedule(preset("default").processors).payloadShares; // [0.9]
 */
export function pipelineSchedule(processors: readonly Processor[]): PipelineSchedule {
  const inputs = declaredTriggers(processors, "tool-input")
    .map((trigger) => trigger.above)
    .filter((above) => above > 0);
  const fold = processors.filter(runsAtCheckpoints);
  return {
    fold,
    ahead: fold.filter((processor) => processor.prepareAhead !== undefined),
    onMessage: stageProcessors(processors, "each-message"),
    onOverflow: stageProcessors(processors, "overflow"),
    onUserRequest: stageProcessors(processors, "user-request"),
    payloadShares: declaredTriggers(processors, "payload-share")
      .map((trigger) => trigger.share)
      .filter((share) => share > 0),
    turnCounts: declaredTriggers(processors, "turn-count")
      .map((trigger) => trigger.above)
      .filter((above) => above > 0),
    messageCounts: declaredTriggers(processors, "message-count")
      .map((trigger) => trigger.above)
      .filter((above) => above > 0),
    toolOutput: declaredTriggers(processors, "tool-output").filter((trigger) => trigger.tokens > 0),
    settledHistory: declaredTriggers(processors, "settled-history").length > 0,
    inputsAbove: inputs.length === 0 ? 0 : Math.min(...inputs),
  };
}
