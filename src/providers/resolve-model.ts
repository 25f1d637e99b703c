import type { LanguageModelV4 } from "@ai-sdk/provider";
import { ConfigError } from "../errors/errors.ts";
import { apiKeyFor } from "./api-key.ts";
import { parseModelSpec } from "./model-spec.ts";
import { providerCatalog, type ApiKeyName, type CompatibleProviderName } from "./provider-catalog.ts";
import { optionalPeer } from "../errors/optional-peer.ts";

/** What model resolution may read besides the model string. All optional. */
export interface ResolveModelOptions {
  /** Environment to read API keys and `CTXKIT_BASE_URL` from. Defaults to `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Base URL for OpenAI-compatible servers (the `baseURL` setting); the model string's `@url` wins. */
  baseURL?: string | undefined;
  /** Keys from the `apiKeys` settings, used when the usual environment variable is not set. */
  apiKeys?: Readonly<Partial<Record<ApiKeyName, string | undefined>>> | undefined;
  /** Extra HTTP headers sent with every request. */
  headers?: Record<string, string>;
  /** A fetch implementation (proxies, instrumentation). Defaults to the global fetch. */
  fetch?: typeof globalThis.fetch;
  /** The setting the model string came from, named in errors. Defaults to `model`. */
  settingKey?: string;
}

function checkedURL(url: string, settingKey: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.protocol === "http:" || parsed.protocol === "https:") return url.replace(/\/+$/, "");
  } catch {
    // reported below
  }
  throw new ConfigError(settingKey, `"${url}" is not an http(s) URL; write e.g. http://127.0.0.1:11434/v1`);
}

async function compatibleModel(
  provider: CompatibleProviderName,
  modelId: string,
  baseURL: string | undefined,
  options: ResolveModelOptions,
  env: Readonly<Record<string, string | undefined>>,
): Promise<LanguageModelV4> {
  const chosen =
    baseURL ?? options.baseURL ?? env["CTXKIT_BASE_URL"] ?? providerCatalog[provider].defaultBaseURL;
  if (chosen === undefined || chosen.trim() === "") {
    throw new ConfigError(
      "baseURL",
      `${provider}:${modelId} needs the server's base URL; write ${provider}:${modelId}@http://127.0.0.1:8000/v1, ` +
        "set CTXKIT_BASE_URL, or run: ctxkit config set baseURL <url>",
    );
  }
  const apiKey = apiKeyFor(provider, { env, apiKeys: options.apiKeys ?? {} });
  const { createOpenAICompatible } = await optionalPeer(
    "@ai-sdk/openai-compatible",
    `the ${provider}: provider`,
    () => import("@ai-sdk/openai-compatible"),
  );
  const factory = createOpenAICompatible({
    name: provider,
    baseURL: checkedURL(chosen, "baseURL"),
    includeUsage: true,
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(options.headers === undefined ? {} : { headers: options.headers }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  return factory.chatModel(modelId);
}

/**
 * Resolves a model string to an AI SDK language model. Provider packages are imported only when needed.
 *
 * - `openai:<model>` (Responses API), `anthropic:<model>`, `google:<model>` (alias `gemini:`): keys from
 *   OPENAI_API_KEY, ANTHROPIC_API_KEY, GOOGLE_GENERATIVE_AI_API_KEY or GEMINI_API_KEY, else `apiKeys` settings.
 * - `openai-compatible:<model>@<baseURL>` (or the `baseURL` option / CTXKIT_BASE_URL) for any chat-completions
 *   server; `ollama:`, `lmstudio:`, `vllm:`, `llamacpp:` and `openrouter:` are the same with a default base URL.
 *
 * A missing key, an unknown provider or a missing base URL throws ConfigError saying what to set.
 *
 * @example
 * const model = await resolveModel("ollama:llama3.1:8b");
 * const { text } = await generateText({ model, prompt: "Hello" });
 */
export async function resolveModel(
  spec: string,
  options: ResolveModelOptions = {},
): Promise<LanguageModelV4> {
  const settingKey = options.settingKey ?? "model";
  const { provider, modelId, baseURL } = parseModelSpec(spec, settingKey);
  const env = options.env ?? process.env;
  if (provider !== "openai" && provider !== "anthropic" && provider !== "google") {
    return compatibleModel(provider, modelId, baseURL, options, env);
  }
  const apiKey = apiKeyFor(provider, { env, apiKeys: options.apiKeys ?? {} });
  const variable = providerCatalog[provider].baseURLVariable;
  const hostedBaseURL = baseURL ?? (variable === undefined ? undefined : env[variable]);
  const common = {
    ...(apiKey === undefined ? {} : { apiKey }),
    ...(hostedBaseURL === undefined || hostedBaseURL === ""
      ? {}
      : { baseURL: checkedURL(hostedBaseURL, settingKey) }),
    ...(options.headers === undefined ? {} : { headers: options.headers }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  };
  switch (provider) {
    case "openai": {
      const { createOpenAI } = await optionalPeer(
        "@ai-sdk/openai",
        "the openai: provider",
        () => import("@ai-sdk/openai"),
      );
      return createOpenAI(common)(modelId);
    }
    case "anthropic": {
      const { createAnthropic } = await optionalPeer(
        "@ai-sdk/anthropic",
        "the anthropic: provider",
        () => import("@ai-sdk/anthropic"),
      );
      return createAnthropic(common)(modelId);
    }
    case "google": {
      const { createGoogleGenerativeAI } = await optionalPeer(
        "@ai-sdk/google",
        "the google: provider",
        () => import("@ai-sdk/google"),
      );
      return createGoogleGenerativeAI(common)(modelId);
    }
  }
}
