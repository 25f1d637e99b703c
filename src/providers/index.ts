export {
  providerCatalog,
  providerNames,
  providerAliases,
  isCompatibleProvider,
  type ProviderName,
  type HostedProviderName,
  type CompatibleProviderName,
  type ApiKeyName,
  type ProviderEntry,
} from "./provider-catalog.ts";
export { parseModelSpec, formatModelSpec, type ModelSpec } from "./model-spec.ts";
export { apiKeyFor, type ApiKeySources } from "./api-key.ts";
export { resolveModel, type ResolveModelOptions } from "./resolve-model.ts";
export {
  resolveConfiguredModels,
  type ModelSettings,
  type ConfiguredModels,
} from "./resolve-configured-models.ts";
export {
  classifyProviderError,
  isRetryableProviderError,
  type ProviderErrorContext,
} from "./classify-provider-error.ts";
export { retryAfterMs } from "./retry-after.ts";
export { errorChain, transportFailure, type TransportFailure } from "./error-chain.ts";
export { withRetries, type RetryOptions, type RetryNotice } from "./with-retries.ts";
