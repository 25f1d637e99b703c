import {
  resolveGovernorSettings,
  type GovernorSettings,
  type GovernorSettingsInput,
} from "./governor-settings.ts";
import { AT_EVERY_CHECKPOINT, type Processor, type ProcessorTrigger } from "./processor.ts";

/**
 * What a governor runs — the one runtime input to governance: its processors in order, each configured by its
 * factory and saying when it runs (`Processor.triggers`), and the governor's own settings (`GovernorSettings`:
 * pre-flight, the budget notice, loop detection, the prompt-cache arithmetic, and what processors share through
 * their context — the protection window, `groundingTarget`, `tailShare`). Make one with `createPipeline` or
 * `preset`.
 */
export interface GovernancePipeline {
  readonly processors: readonly Processor[];
  readonly settings: GovernorSettings;
}

/** Input of `createPipeline`: the processors, and governor settings as a user writes them (defaults filled in). */
export interface GovernancePipelineInput {
  readonly processors: readonly Processor[];
  readonly settings?: GovernorSettingsInput;
}

/**
 * A pipeline of your own processors (built-in factories, your own, or both), in the order they run.
 * Throws `ValidationError` for bad settings.
 *
 * @example
 * const pipeline = createPipeline({
 *   processors: [createCapToolResults({ capShare: 0.5 }), createCompactHistory({ trigger: 0.7 })],
 *   settings: { pricing: "openai" },
 * });
 * createGovernor({ contextWindow: 128_000, counter, summarizer, pipeline });
 */
export function createPipeline(input: GovernancePipelineInput): GovernancePipeline {
  return { processors: [...input.processors], settings: resolveGovernorSettings(input.settings ?? {}) };
}

/** The triggers of a processor (at every checkpoint when it declares none). */
export function triggersOf(processor: Processor): readonly ProcessorTrigger[] {
  return processor.triggers ?? AT_EVERY_CHECKPOINT;
}

const CHECKPOINT_KINDS: ReadonlySet<ProcessorTrigger["kind"]> = new Set([
  "checkpoint",
  "payload-share",
  "turn-count",
  "message-count",
  "tool-output",
  "settled-history",
]);

/** Whether the processor belongs to the fold run at checkpoints. */
export function runsAtCheckpoints(processor: Processor): boolean {
  return triggersOf(processor).some((trigger) => CHECKPOINT_KINDS.has(trigger.kind));
}

/** The processors, in pipeline order, that run in a stage of their own (a new message, an overflow, `/compact`). */
export function stageProcessors(
  processors: readonly Processor[],
  stage: "each-message" | "overflow" | "user-request",
): Processor[] {
  return processors.filter((processor) => triggersOf(processor).some((trigger) => trigger.kind === stage));
}

/** Every trigger of one kind declared in the pipeline. */
export function declaredTriggers<Kind extends ProcessorTrigger["kind"]>(
  processors: readonly Processor[],
  kind: Kind,
): Extract<ProcessorTrigger, { kind: Kind }>[] {
  return processors.flatMap((processor) =>
    triggersOf(processor).filter(
      (trigger): trigger is Extract<ProcessorTrigger, { kind: Kind }> => trigger.kind === kind,
    ),
  );
}

/**
 * The same processors with some governor settings changed (the rest kept). Throws `ValidationError` for bad
 * settings.
 *
 * @example
 * const priced = withSettings(preset("default"), { pricing: "openai" });
 */
export function withSettings(
  pipeline: GovernancePipeline,
  settings: GovernorSettingsInput,
): GovernancePipeline {
  return createPipeline({ processors: pipeline.processors, settings: { ...pipeline.settings, ...settings } });
}
