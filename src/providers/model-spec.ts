import { ConfigError } from "../errors/errors.ts";
import { providerAliases, providerCatalog, providerNames, type ProviderName } from "./provider-catalog.ts";

/** A parsed model string: `provider:model` or `provider:model@baseURL`. */
export interface ModelSpec {
  readonly provider: ProviderName;
  /** The provider's own model id; may contain `:` (Ollama tags such as `llama3.1:8b`). */
  readonly modelId: string;
  /** A base URL given in the string after `@`. */
  readonly baseURL?: string;
}

// The base URL is the part after the last "@" that starts a URL, so model ids containing "@" still parse.
const baseURLSuffix = /@(https?:\/\/[^\s@]+)$/;

const example =
  "openai:gpt-4.1-mini, anthropic:claude-sonnet-4-5, ollama:llama3.1 or openai-compatible:qwen3@http://127.0.0.1:8000/v1";

/**
 * Splits a model string into provider, model id and optional base URL. Throws ConfigError naming `settingKey`
 * when the string has no provider, names an unknown one, or has no model id.
 *
 * @example
 * parseModelSpec("ollama:llama3.1:8b"); // { provider: "ollama", modelId: "llama3.1:8b" }
 * parseModelSpec("openai-compatible:qwen@http://127.0.0.1:8000/v1");
 */
export function parseModelSpec(spec: string, settingKey = "model"): ModelSpec {
  const trimmed = spec.trim();
  const separator = trimmed.indexOf(":");
  if (separator <= 0) {
    throw new ConfigError(settingKey, `"${spec}" names no provider; write provider:model, e.g. ${example}`);
  }
  const written = trimmed.slice(0, separator).toLowerCase();
  const provider = written in providerCatalog ? (written as ProviderName) : providerAliases[written];
  if (provider === undefined) {
    throw new ConfigError(
      settingKey,
      `unknown provider "${written}" in "${spec}"; use one of ${providerNames.join(", ")}`,
    );
  }
  let rest = trimmed.slice(separator + 1);
  const urlMatch = baseURLSuffix.exec(rest);
  const baseURL = urlMatch?.[1];
  if (urlMatch) rest = rest.slice(0, urlMatch.index);
  if (rest === "") {
    throw new ConfigError(settingKey, `"${spec}" names no model after "${written}:"; e.g. ${example}`);
  }
  return baseURL === undefined ? { provider, modelId: rest } : { provider, modelId: rest, baseURL };
}

/**
 * Writes a spec back as a model string.
 *
 * @example
 * formatModelSpec({ provider: "ollama", modelId: "llama3.1" }); // "ollama:llama3.1"
 */
export function formatModelSpec(spec: ModelSpec): string {
  return `${spec.provider}:${spec.modelId}${spec.baseURL === undefined ? "" : `@${spec.baseURL}`}`;
}
