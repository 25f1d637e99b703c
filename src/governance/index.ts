/**
 * `ctxkit/governance`: the governor and what it runs — pipelines of processors (trim, compact, offload,
 * truncate…) with the governor's settings, presets, the recall tool, loop detection, cache economics and
 * governance events.
 */
export * from "./governor-settings.ts";
export * from "./preset-options.ts";
export * from "./presets.ts";
export * from "./events.ts";
export * from "./processor.ts";
export {
  createPipeline,
  withSettings,
  type GovernancePipeline,
  type GovernancePipelineInput,
} from "./pipeline.ts";
export * from "./governor.ts";
export * from "./offload-store.ts";
export * from "./recall-tool.ts";
export * from "./loop-detector.ts";
export {
  type CachePricing,
  type CheckpointCase,
  checkpointPays,
  pricingForProvider,
} from "./cache-economics.ts";
export * from "./processors/index.ts";
export {
  DEFAULT_REUSE_RATES,
  DEFAULT_REUSE_RATES_WEIGHT,
  REUSE_AGE_LIMITS,
  reuseRate,
  type ReuseRates,
} from "./reuse-rates.ts";
export type { ContextKind } from "../metrics/context-kind.ts";
