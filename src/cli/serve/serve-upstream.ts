import { ConfigError } from "../../errors/errors.ts";
import { apiKeyFor } from "../../providers/api-key.ts";
import { parseModelSpec, type ModelSpec } from "../../providers/model-spec.ts";
import { providerCatalog, type ApiKeyName } from "../../providers/provider-catalog.ts";
import type { UpstreamOptions } from "../../server/upstream/upstream-options.ts";

/** What the upstream is chosen from: the `--upstream` and `--model` flags over the settings. */
export interface UpstreamChoice {
  /** `--upstream <baseURL>`. */
  readonly upstream?: string | undefined;
  /** `--model`, else the `model` setting. */
  readonly model?: string | undefined;
  /** The `baseURL` setting (OpenAI-compatible servers). */
  readonly baseURL?: string | undefined;
  readonly apiKeys?: Readonly<Partial<Record<ApiKeyName, string | undefined>>>;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `--prompt-cache-key` / `--no-prompt-cache-key`: over what the provider is known to take. */
  readonly promptCacheKey?: boolean | undefined;
  /** `--reasoning-content` / `--no-reasoning-content`: over what the provider is known to take. */
  readonly reasoningContent?: boolean | undefined;
}

/**
 * The fields the upstream is sent beside OpenAI's own: the flags when given, else what the provider's catalog
 * entry says its endpoint takes (`known`; none for an `--upstream` URL, which keeps the server's defaults).
 */
function fieldOptions(
  choice: UpstreamChoice,
  known: { readonly promptCacheKey: boolean; readonly reasoningContent: boolean } | undefined,
): Pick<UpstreamOptions, "promptCacheKey" | "reasoningContent"> {
  const promptCacheKey = choice.promptCacheKey ?? known?.promptCacheKey;
  const reasoningContent = choice.reasoningContent ?? known?.reasoningContent;
  return {
    ...(promptCacheKey !== undefined && { promptCacheKey }),
    ...(reasoningContent !== undefined && { reasoningContent }),
  };
}

/** OpenAI-compatible endpoints of the hosted providers (Anthropic and Google document theirs). */
const HOSTED_BASE_URLS = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com/v1",
  google: "https://generativelanguage.googleapis.com/v1beta/openai",
} as const;

/**
 * Checks an upstream base URL: http(s), no credentials in it, no trailing slash.
 *
 * @example
 * checkedUpstreamURL("http://127.0.0.1:11434/v1/", "--upstream"); // "http://127.0.0.1:11434/v1"
 */
export function checkedUpstreamURL(url: string, source: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    throw new ConfigError(
      source,
      `"${url}" is not an http(s) URL; write the server's base URL, e.g. http://127.0.0.1:11434/v1`,
    );
  }
  if (parsed.username !== "" || parsed.password !== "") {
    throw new ConfigError(
      source,
      "the URL carries credentials; remove them and set CTXKIT_UPSTREAM_API_KEY (or the provider's key) instead",
    );
  }
  return url.replace(/\/+$/, "");
}

function baseURLFor(spec: ModelSpec, choice: UpstreamChoice): string {
  const { provider } = spec;
  if (provider === "openai" || provider === "anthropic" || provider === "google") {
    const variable = providerCatalog[provider].baseURLVariable;
    const fromEnv = variable === undefined ? undefined : choice.env[variable];
    return checkedUpstreamURL(fromEnv || HOSTED_BASE_URLS[provider], variable ?? "model");
  }
  const url = spec.baseURL ?? choice.baseURL ?? providerCatalog[provider].defaultBaseURL;
  if (url === undefined) {
    throw new ConfigError(
      "baseURL",
      `${provider}:${spec.modelId} needs the server's base URL; pass --upstream <url>, write ` +
        `${provider}:${spec.modelId}@http://127.0.0.1:8000/v1, or run: ctxkit config set baseURL <url>`,
    );
  }
  return checkedUpstreamURL(url, spec.baseURL === undefined ? "baseURL" : "model");
}

/**
 * The OpenAI-compatible server `ctxkit serve` forwards to, or undefined when neither `--upstream` nor a model
 * names one (the proxy and turns routes then answer 503). `--upstream` wins over the model's provider; its key
 * comes from `CTXKIT_UPSTREAM_API_KEY`, else the model provider's key when there is one. Without `--upstream`
 * the provider's endpoint and key are used (a hosted provider without its key is a ConfigError), and its catalog
 * entry says whether `prompt_cache_key` and `reasoning_content` are sent; the flags override either way.
 *
 * @example
 * upstreamFromChoice({ model: "ollama:llama3.1", env: process.env });
 * // { baseURL: "http://127.0.0.1:11434/v1", model: "llama3.1", promptCacheKey: false, reasoningContent: true }
 */
export function upstreamFromChoice(choice: UpstreamChoice): UpstreamOptions | undefined {
  const spec =
    choice.model === undefined || choice.model.trim() === "" ? undefined : parseModelSpec(choice.model);
  const sources = { env: choice.env, apiKeys: choice.apiKeys ?? {} };
  const explicitKey = choice.env["CTXKIT_UPSTREAM_API_KEY"]?.trim() || undefined;
  if (choice.upstream !== undefined) {
    const baseURL = checkedUpstreamURL(choice.upstream, "--upstream");
    let apiKey = explicitKey;
    if (apiKey === undefined && spec !== undefined) {
      try {
        apiKey = apiKeyFor(spec.provider, sources);
      } catch {
        apiKey = undefined;
      }
    }
    return {
      baseURL,
      ...(apiKey !== undefined && { apiKey }),
      ...(spec !== undefined && { model: spec.modelId }),
      ...fieldOptions(choice, undefined),
    };
  }
  if (spec === undefined) return undefined;
  const apiKey = explicitKey ?? apiKeyFor(spec.provider, sources);
  return {
    baseURL: baseURLFor(spec, choice),
    ...(apiKey !== undefined && { apiKey }),
    model: spec.modelId,
    ...fieldOptions(choice, providerCatalog[spec.provider]),
  };
}

/**
 * The Anthropic Messages API `ctxkit serve` forwards `POST /v1/messages` to (Claude Code, Anthropic SDK clients),
 * or undefined when there is no key for it (the route then answers 503). The base URL is `--anthropic-upstream`,
 * else Anthropic's (`ANTHROPIC_BASE_URL` is not read: in a shell set up for Claude Code it names ctxkit itself);
 * the key is `CTXKIT_ANTHROPIC_API_KEY`, else `ANTHROPIC_API_KEY`, else the `apiKeys.anthropic` setting. A
 * loopback upstream may go without a key.
 *
 * @example
 * anthropicUpstreamFromChoice({ env: { ANTHROPIC_API_KEY: "sk-ant-…" } });
 * // { baseURL: "https://api.anthropic.com/v1", apiKey: "sk-ant-…", auth: "x-api-key" }
 */
export function anthropicUpstreamFromChoice(choice: {
  readonly anthropicUpstream?: string | undefined;
  readonly apiKeys?: UpstreamChoice["apiKeys"];
  readonly env: UpstreamChoice["env"];
}): UpstreamOptions | undefined {
  const { env } = choice;
  const baseURL =
    choice.anthropicUpstream === undefined
      ? HOSTED_BASE_URLS.anthropic
      : checkedUpstreamURL(choice.anthropicUpstream, "--anthropic-upstream");
  const apiKey =
    env["CTXKIT_ANTHROPIC_API_KEY"]?.trim() ||
    env["ANTHROPIC_API_KEY"]?.trim() ||
    choice.apiKeys?.anthropic?.trim() ||
    undefined;
  const local = /^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])(:|\/|$)/.test(baseURL);
  if (apiKey === undefined && !local) return undefined;
  return { baseURL, ...(apiKey !== undefined && { apiKey }), auth: "x-api-key" };
}
