export type * from "./anthropic-message.ts";
export { anthropicPayloadSchema } from "./anthropic-schema.ts";
export { toAnthropic } from "./to-anthropic.ts";
export { fromAnthropic } from "./from-anthropic.ts";
export { toAnthropicTools, type NeutralToolDefinition } from "./anthropic-tools.ts";
export {
  MAX_ANTHROPIC_BREAKPOINTS,
  planAnthropicBreakpoints,
  type BreakpointPlanInput,
  type BreakpointPosition,
  type CacheBreakpoint,
  type CacheTtl,
} from "./cache-breakpoints.ts";
export {
  DEFAULT_MIN_CACHEABLE_TOKENS,
  anthropicMinimumCacheableTokens,
} from "../../../pricing/cache-minimums.ts";
export { anthropicAnchors } from "./anthropic-anchors.ts";
export { ephemeralTail } from "./ephemeral-tail.ts";
export {
  anthropicBreakpointsOf,
  countAnthropicBreakpoints,
  withAnthropicBreakpoints,
  type AnthropicAnchor,
  type AnthropicBreakpointOptions,
  type AnthropicCacheableRequest,
} from "./with-anthropic-breakpoints.ts";
