/**
 * `ctxkit/metrics`: measures over a conversation — facts, retention and next-step grounding.
 */
export { type Fact, type FactKind, messageFacts } from "./facts.ts";
export { type RetentionObservation, RetentionTracker, scoreRetention } from "./retention.ts";
export {
  GroundingTracker,
  type GroundingObservation,
  type GroundingTotals,
  type MissingSpan,
} from "./grounding.ts";
export { type ReplySpan, type SpanKind } from "./reply-spans.ts";
