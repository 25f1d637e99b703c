/**
 * `ctxkit/tokens`: token counting — exact OpenAI encodings and per-family estimators, media costs, the model
 * registry (windows, output caps, tokenizer families) and `counterForModel`.
 */
export {
  messageTokens,
  messageTokensAsync,
  textTokensAsync,
  withTokenCount,
  type TokenCounter,
} from "./token-counter.ts";
export {
  TOKENIZER_FAMILIES,
  isExactEncoding,
  isTokenizerFamily,
  type ExactEncoding,
  type TokenizerFamily,
} from "./tokenizer-family.ts";
export { estimateTextTokens, type TextRates } from "./text-estimate.ts";
export { estimatorProfile, type EstimatorProfile } from "./estimator-profiles.ts";
export { sumMessageTokens, type MessageCosts } from "./message-costs.ts";
export {
  DEFAULT_IMAGE_TOKENS,
  fileTokens,
  imageTokens,
  imageTokensForSize,
  pdfPageCount,
  type ImageTokenRule,
  type MediaCosts,
} from "./media-tokens.ts";
export { imageDimensions, type ImageDimensions } from "./image-dimensions.ts";
export {
  ESTIMATOR_VERSION,
  createEstimatingCounter,
  type EstimatingCounter,
  type EstimatingCounterOptions,
} from "./estimating-counter.ts";
export { createExactCounter } from "./exact-counter.ts";
export {
  MAX_RESERVED_OUTPUT_TOKENS,
  reservedOutputTokens,
  usableWindow,
  type ModelInfo,
  type ModelMatch,
  type ResolvedModel,
} from "./model-info.ts";
export { parseModelName, type ParsedModelName } from "./model-name.ts";
export { KNOWN_MODELS } from "./known-models.ts";
export { ModelRegistry, defaultModelRegistry, type ModelOverride } from "./model-registry.ts";
export { counterForModel, estimatorForModel } from "./counter-for-model.ts";
export { CountingTokenCounter } from "./token-cache.ts";
