import { ConfigError } from "../errors/errors.ts";
import { providerCatalog, providerNames, type ApiKeyName, type ProviderName } from "./provider-catalog.ts";

/** Where API keys are looked up: the environment first, then the `apiKeys` settings. */
export interface ApiKeySources {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly apiKeys?: Readonly<Partial<Record<ApiKeyName, string | undefined>>>;
}

/**
 * The API key for `provider`, or undefined for a local server that needs none. A hosted provider without a key
 * throws ConfigError naming the variable to set.
 *
 * @example
 * apiKeyFor("anthropic", { env: process.env }); // the value of ANTHROPIC_API_KEY
 */
export function apiKeyFor(provider: ProviderName, sources: ApiKeySources): string | undefined {
  const entry = providerCatalog[provider];
  for (const variable of entry.keyVariables) {
    const value = sources.env[variable];
    if (value !== undefined && value.trim() !== "") return value.trim();
  }
  const stored = sources.apiKeys?.[entry.keySetting];
  if (stored !== undefined && stored.trim() !== "") return stored.trim();
  if (!entry.keyRequired) return undefined;
  const variables = entry.keyVariables.join(" or ");
  throw new ConfigError(
    `apiKeys.${entry.keySetting}`,
    `no API key for ${provider}; set ${variables} in the environment ` +
      `(or run: ctxkit config set apiKeys.${entry.keySetting} <key> --user)`,
  );
}

/**
 * Every API key the sources hold, for every provider: what error messages must never show (pass them as
 * `secrets` to `classifyProviderError` or `redactSecrets`).
 *
 * @example
 * classifyProviderError(error, { secrets: knownApiKeys({ env: process.env, apiKeys: settings.apiKeys }) });
 */
export function knownApiKeys(sources: ApiKeySources): string[] {
  const keys = providerNames.flatMap((provider) => [
    ...providerCatalog[provider].keyVariables.map((variable) => sources.env[variable]),
    sources.apiKeys?.[providerCatalog[provider].keySetting],
  ]);
  return [...new Set(keys.filter((key): key is string => key !== undefined && key.trim() !== ""))].map(
    (key) => key.trim(),
  );
}
