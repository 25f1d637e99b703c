export {
  collapseWhitespace,
  ERROR_LINE_LENGTH,
  errorLineLabel,
  errorLinesIn,
  filePathsIn,
  INSTRUCTION_SENTENCE_LENGTH,
  instructionSentences,
  normalizeFact,
} from "./fact-patterns.ts";
export { findSubstrings } from "./find-substrings.ts";
export { type Fact, type FactKind, messageFacts, messageScoringText, stringLeaves } from "./facts.ts";
export { type RetentionObservation, RetentionTracker, scoreRetention, viewScoringText } from "./retention.ts";
export {
  PRIMARY_ARGUMENT_KEYS,
  PRIMARY_ARGUMENT_LENGTH,
  primaryArgument,
  toolCallLabel,
} from "./tool-call-label.ts";
export {
  GroundingTracker,
  type GroundingObservation,
  type GroundingTotals,
  type MissingSpan,
} from "./grounding.ts";
export { replySpans, type ReplySpan, type SpanKind } from "./reply-spans.ts";
