/**
 * `ctxkit/replay`: replays of recorded conversations through governance, metered as a provider bills them.
 */
export {
  governedReplay,
  type GovernedReplayOptions,
  type GovernedStep,
  type ReplayCacheModel,
  replayConversation,
  type ReplayOptions,
  type ReplayRequest,
  type ReplayTotals,
  type RetentionScorer,
} from "./replay.ts";
export * from "./replay-meter.ts";
export { type BreakpointPlacement } from "./breakpoint-placement.ts";
export * from "./metered-summarizer.ts";
