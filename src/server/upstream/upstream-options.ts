/** The OpenAI-compatible model server the proxy and the turns route forward to. */
export interface UpstreamOptions {
  /** Base URL including the API version, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`. */
  readonly baseURL: string;
  /** Sent as `Authorization: Bearer …` (or `x-api-key`, see `auth`). Never logged, never returned to clients. */
  readonly apiKey?: string;
  /** How the key is sent: `bearer` (OpenAI and compatibles, the default) or `x-api-key` (Anthropic). */
  readonly auth?: "bearer" | "x-api-key";
  /**
   * The model that serves every request: it replaces the request's `model`, since the governance budget is
   * computed for it. Without it the request's model is forwarded (and the turns route requires one).
   */
  readonly model?: string;
  /**
   * The provider recorded on the replies the proxy stores (`Message.provider`). Default: `anthropic` for the
   * Anthropic Messages upstream, `openai-compatible` for the others.
   */
  readonly provider?: string;
  /** Extra headers for the upstream (e.g. an organisation id). */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * In stateful mode, send the session id as OpenAI's `prompt_cache_key` (better cache hit rates across a fleet)
   * when the client did not set one. Default false: set it for upstreams known to take the field (OpenAI's API;
   * `ctxkit serve` decides by the model's provider, see `providerCatalog`). Servers that refuse unknown fields
   * (Google's OpenAI-compatible endpoint) answer 400 to it.
   */
  readonly promptCacheKey?: boolean;
  /**
   * In stateful chat mode, send the stored reasoning of each assistant message that made tool calls back as
   * `reasoning_content` (DeepSeek's thinking mode answers 400 without it; other assistant messages go without
   * their reasoning). Default true: the reasoning came from this upstream, and one that returns none gets none
   * back; false for servers that refuse the field.
   */
  readonly reasoningContent?: boolean;
}

/**
 * The chat completions URL of an upstream.
 *
 * @example
 * chatCompletionsUrl({ baseURL: "http://127.0.0.1:8080/v1/" }); // "http://127.0.0.1:8080/v1/chat/completions"
 */
export function chatCompletionsUrl(upstream: Pick<UpstreamOptions, "baseURL">): string {
  return upstreamUrl(upstream, "chat/completions");
}

/**
 * The URL of an endpoint of an upstream.
 *
 * @example
 * upstreamUrl({ baseURL: "http://127.0.0.1:8080/v1/" }, "responses"); // "http://127.0.0.1:8080/v1/responses"
 */
export function upstreamUrl(upstream: Pick<UpstreamOptions, "baseURL">, path: string): string {
  return `${upstream.baseURL.replace(/\/+$/, "")}/${path}`;
}
