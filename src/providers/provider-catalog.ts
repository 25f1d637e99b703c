/** Hosted providers with their own AI SDK package. */
export type HostedProviderName = "openai" | "anthropic" | "google";

/** Servers that speak the OpenAI chat-completions protocol, reached through `@ai-sdk/openai-compatible`. */
export type CompatibleProviderName =
  "openai-compatible" | "ollama" | "lmstudio" | "vllm" | "llamacpp" | "openrouter";

/** Every provider a model string may name. */
export type ProviderName = HostedProviderName | CompatibleProviderName;

/** Names under which an API key may be stored in the `apiKeys` settings. */
export type ApiKeyName = "openai" | "anthropic" | "google" | "openrouter" | "openaiCompatible";

/** What ctxkit knows about one provider: where its key comes from and, for local servers, where they listen. */
export interface ProviderEntry {
  /** Environment variables holding the API key, in the order they are tried. */
  readonly keyVariables: readonly string[];
  /** The `apiKeys.<name>` setting that may hold the key instead. */
  readonly keySetting: ApiKeyName;
  /** Whether a request without a key is pointless (hosted APIs) or normal (local servers). */
  readonly keyRequired: boolean;
  /** Base URL used when neither the model string nor the settings give one. */
  readonly defaultBaseURL?: string;
  /** Environment variable that may override the base URL of a hosted provider. */
  readonly baseURLVariable?: string;
  /**
   * Whether its OpenAI-compatible chat endpoint takes OpenAI's `prompt_cache_key` (`ctxkit serve` sends the
   * session id in it only then: Google's endpoint, for one, refuses the unknown field with a 400).
   */
  readonly promptCacheKey: boolean;
  /**
   * Whether its OpenAI-compatible chat endpoint takes an assistant message's reasoning back as
   * `reasoning_content` (DeepSeek's thinking mode requires it on tool-calling turns; `ctxkit serve` sends the
   * stored reasoning of such turns back only then).
   */
  readonly reasoningContent: boolean;
}

/**
 * The providers ctxkit can resolve, keyed by the name used in model strings (`ollama:llama3.1`).
 *
 * @example
 * providerCatalog.ollama.defaultBaseURL; // "http://127.0.0.1:11434/v1"
 */
export const providerCatalog: Readonly<Record<ProviderName, ProviderEntry>> = {
  openai: {
    keyVariables: ["OPENAI_API_KEY"],
    keySetting: "openai",
    keyRequired: true,
    baseURLVariable: "OPENAI_BASE_URL",
    promptCacheKey: true,
    reasoningContent: false,
  },
  anthropic: {
    keyVariables: ["ANTHROPIC_API_KEY"],
    keySetting: "anthropic",
    keyRequired: true,
    baseURLVariable: "ANTHROPIC_BASE_URL",
    promptCacheKey: false,
    reasoningContent: false,
  },
  google: {
    keyVariables: ["GOOGLE_GENERATIVE_AI_API_KEY", "GEMINI_API_KEY"],
    keySetting: "google",
    keyRequired: true,
    promptCacheKey: false,
    reasoningContent: false,
  },
  "openai-compatible": {
    keyVariables: ["OPENAI_COMPATIBLE_API_KEY"],
    keySetting: "openaiCompatible",
    keyRequired: false,
    promptCacheKey: false,
    reasoningContent: true,
  },
  ollama: {
    keyVariables: ["OLLAMA_API_KEY"],
    keySetting: "openaiCompatible",
    keyRequired: false,
    defaultBaseURL: "http://127.0.0.1:11434/v1",
    promptCacheKey: false,
    reasoningContent: true,
  },
  lmstudio: {
    keyVariables: ["LMSTUDIO_API_KEY"],
    keySetting: "openaiCompatible",
    keyRequired: false,
    defaultBaseURL: "http://127.0.0.1:1234/v1",
    promptCacheKey: false,
    reasoningContent: true,
  },
  vllm: {
    keyVariables: ["VLLM_API_KEY"],
    keySetting: "openaiCompatible",
    keyRequired: false,
    defaultBaseURL: "http://127.0.0.1:8000/v1",
    promptCacheKey: false,
    reasoningContent: true,
  },
  llamacpp: {
    keyVariables: ["LLAMACPP_API_KEY"],
    keySetting: "openaiCompatible",
    keyRequired: false,
    defaultBaseURL: "http://127.0.0.1:8080/v1",
    promptCacheKey: false,
    reasoningContent: true,
  },
  openrouter: {
    keyVariables: ["OPENROUTER_API_KEY"],
    keySetting: "openrouter",
    keyRequired: true,
    defaultBaseURL: "https://openrouter.ai/api/v1",
    promptCacheKey: false,
    reasoningContent: true,
  },
};

/**
 * Every provider name, in the order they are listed to users.
 *
 * @example
 * providerNames.includes("ollama"); // true
 */
export const providerNames = Object.keys(providerCatalog) as ProviderName[];

/**
 * Other spellings users type for a provider.
 *
 * @example
 * providerAliases["gemini"]; // "google"
 */
export const providerAliases: Readonly<Record<string, ProviderName>> = {
  gemini: "google",
  "google-generative-ai": "google",
  "lm-studio": "lmstudio",
  "llama.cpp": "llamacpp",
  "llama-cpp": "llamacpp",
};

/**
 * True for providers reached through the OpenAI-compatible package.
 *
 * @example
 * isCompatibleProvider("vllm"); // true
 */
export function isCompatibleProvider(provider: ProviderName): provider is CompatibleProviderName {
  return provider !== "openai" && provider !== "anthropic" && provider !== "google";
}
