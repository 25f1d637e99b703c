import { APICallError, LoadAPIKeyError } from "@ai-sdk/provider";
import { CtxkitError } from "../errors/ctxkit-error.ts";
import { ProviderError, type ProviderErrorKind } from "../errors/provider-errors.ts";
import { redactSecrets } from "../errors/redact-secrets.ts";
import { isContextOverflowError } from "../errors/overflow-recognition.ts";
import { errorChain, transportFailure, type TransportFailure } from "./error-chain.ts";
import { providerCatalog, type ProviderName } from "./provider-catalog.ts";
import { retryAfterMs } from "./retry-after.ts";

/** What the caller knows about the failed call, used to make the message specific. */
export interface ProviderErrorContext {
  /** The provider that was called; otherwise guessed from the request URL. */
  provider?: ProviderName;
  /** The base URL that was called, when the error does not carry one. */
  baseURL?: string;
  /** Keys the call may have used, removed from the message whatever their shape (see `knownApiKeys`). */
  secrets?: readonly (string | undefined)[];
}

const hostKeyVariables: readonly (readonly [RegExp, string])[] = [
  [/(^|\.)openai\.com$/, "OPENAI_API_KEY"],
  [/(^|\.)anthropic\.com$/, "ANTHROPIC_API_KEY"],
  [/(^|\.)googleapis\.com$/, "GOOGLE_GENERATIVE_AI_API_KEY (or GEMINI_API_KEY)"],
  [/(^|\.)openrouter\.ai$/, "OPENROUTER_API_KEY"],
];

const invalidKeyPattern = /API_KEY_INVALID|API key not valid|invalid[ _-]api[ _-]key/i;

const retryErrorMarker = Symbol.for("vercel.ai.error.AI_RetryError");

function hostOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}

function originOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname.replace(/\/(chat\/completions|responses|messages|models\/.*)$/, "")}`;
  } catch {
    return url;
  }
}

function keyVariable(context: ProviderErrorContext, url: string | undefined): string {
  if (context.provider !== undefined) return providerCatalog[context.provider].keyVariables.join(" or ");
  const host = hostOf(url)?.replace(/:\d+$/, "");
  const known = hostKeyVariables.find(([pattern]) => host !== undefined && pattern.test(host));
  return known?.[1] ?? "the API key for this server (OPENAI_COMPATIBLE_API_KEY or apiKeys.openaiCompatible)";
}

/** The provider's own explanation, from the SDK message or the JSON body (OpenAI, Anthropic, Gemini, Ollama). */
function providerDetail(error: APICallError): string {
  let detail = error.message;
  if ((detail === "" || /^(Bad Request|Internal Server Error)$/i.test(detail)) && error.responseBody) {
    try {
      const body = JSON.parse(error.responseBody) as Record<string, unknown>;
      const inner = body["error"];
      const found =
        typeof inner === "string"
          ? inner
          : typeof inner === "object" && inner !== null
            ? (inner as Record<string, unknown>)["message"]
            : body["message"];
      if (typeof found === "string") detail = found;
    } catch {
      detail = error.responseBody;
    }
  }
  const oneLine = detail.replace(/\s+/g, " ").trim();
  return oneLine.length > 300 ? `${oneLine.slice(0, 297)}...` : oneLine;
}

function fromTransport(failure: TransportFailure, url: string | undefined, cause: unknown): ProviderError {
  const where = originOf(url) ?? failure.address ?? "the provider";
  if (failure.kind === "timeout") {
    return new ProviderError(
      "timeout",
      `the request to ${where} timed out (${failure.code}); retry, raise requestTimeoutMs, or check that the server is not overloaded`,
      { cause },
    );
  }
  const advice: Record<string, string> = {
    ECONNREFUSED: `connection refused by ${where}; is the server at ${where} running?`,
    ConnectionRefused: `connection refused by ${where}; is the server at ${where} running?`,
    ENOTFOUND: `could not resolve the host of ${where}; check the base URL and your network`,
    EAI_AGAIN: `could not resolve the host of ${where} (DNS is not answering); check your network`,
    ECONNRESET: `the connection to ${where} was reset; retry, and check any proxy in between`,
  };
  const message =
    advice[failure.code] ??
    `network error reaching ${where} (${failure.code}); check your network and the base URL`;
  return new ProviderError("network", message, { cause });
}

function fromStatus(error: APICallError, context: ProviderErrorContext, cause: unknown): ProviderError {
  const status = error.statusCode ?? 0;
  const host = hostOf(error.url) ?? "the provider";
  const detail = providerDetail(error);
  const wait = retryAfterMs(error.responseHeaders, error.responseBody);
  const details = { status, cause, ...(wait === undefined ? {} : { retryAfterMs: wait }) };
  // Gemini answers 400 INVALID_ARGUMENT (not 401) to a bad key.
  if (status === 401 || (status === 400 && invalidKeyPattern.test(`${detail} ${error.responseBody ?? ""}`))) {
    const message = `${host} rejected the API key (${status}): ${detail}; check ${keyVariable(context, error.url)}`;
    return new ProviderError("auth", message, details);
  }
  if (status === 403) {
    const message = `${host} refused access (403): ${detail}; check that ${keyVariable(context, error.url)} may use this model`;
    return new ProviderError("auth", message, details);
  }
  if (status === 429) {
    const after = wait === undefined ? "" : ` (retry after ${Math.ceil(wait / 1000)}s)`;
    const message = `rate limited by ${host}${after}: ${detail}; wait and retry, send fewer requests at once, or raise the account's limits`;
    return new ProviderError("rate_limit", message, details);
  }
  if (status === 408 || status === 504) {
    const message = `${host} timed out (${status}): ${detail}; retry, or send a smaller request`;
    return new ProviderError("timeout", message, details);
  }
  if (status === 404) {
    const message = `${host} answered 404: ${detail}; check the model name and the base URL (${originOf(error.url) ?? "unknown"})`;
    return new ProviderError("other", message, details);
  }
  if (status >= 500) {
    const message = `${host} failed with ${status}: ${detail}; retry later`;
    return new ProviderError("other", message, details);
  }
  return new ProviderError("other", `${host} rejected the request (${status}): ${detail}`, details);
}

/**
 * Turns whatever a provider call threw into a ProviderError whose `kind` drives recovery: `overflow` (compact
 * and retry), `rate_limit` (wait `retryAfterMs`), `auth` (fix the key), `timeout` and `network` (retry), `other`.
 * Understands AI SDK errors (APICallError, RetryError, LoadAPIKeyError), Node and undici socket errors, and
 * overflow messages of OpenAI, Anthropic, Gemini, Ollama, vLLM and llama.cpp. A ProviderError is returned as is
 * (but for `context.secrets`). The message never holds a key: known key shapes, and the values in
 * `context.secrets`, are redacted.
 *
 * @example
 * try { await generateText({ model, prompt }); }
 * catch (error) { const failure = classifyProviderError(error); if (failure.kind === "overflow") await compact(); }
 */
export function classifyProviderError(error: unknown, context: ProviderErrorContext = {}): ProviderError {
  const failure = classify(error, context);
  const secrets = (context.secrets ?? []).filter((secret) => secret !== undefined && secret.length >= 6);
  if (!secrets.some((secret) => failure.message.includes(secret!))) return failure;
  return new ProviderError(failure.kind, redactSecrets(failure.message, { secrets }), {
    cause: failure.cause,
    ...(failure.status !== undefined && { status: failure.status }),
    ...(failure.retryAfterMs !== undefined && { retryAfterMs: failure.retryAfterMs }),
  });
}

function classify(error: unknown, context: ProviderErrorContext): ProviderError {
  if (error instanceof ProviderError) return error;
  if (CtxkitError.isInstance(error) && error.code !== "context_overflow") {
    return new ProviderError("other", error.message, { cause: error });
  }
  const target = lastAttempt(error);
  if (isContextOverflowError(target)) {
    const detail = APICallError.isInstance(target) ? providerDetail(target) : messageOf(target);
    const status = APICallError.isInstance(target) ? target.statusCode : undefined;
    return new ProviderError(
      "overflow",
      `the request does not fit the model's context window: ${detail}; compact the history, shorten tool outputs, ` +
        "or use a model with a larger window",
      { cause: error, ...(status === undefined ? {} : { status }) },
    );
  }
  const loadKey = errorChain(target).find((item) => LoadAPIKeyError.isInstance(item));
  if (loadKey !== undefined) {
    const message = `${messageOf(loadKey)}; set ${keyVariable(context, context.baseURL)}`;
    return new ProviderError("auth", message, { cause: error });
  }
  const apiCall = errorChain(target).find((item) => APICallError.isInstance(item));
  if (apiCall !== undefined && apiCall.statusCode !== undefined) return fromStatus(apiCall, context, error);
  const failure = transportFailure(target);
  if (failure !== undefined) return fromTransport(failure, apiCall?.url ?? context.baseURL, error);
  if (apiCall !== undefined && apiCall.isRetryable) {
    const where = originOf(apiCall.url) ?? "the provider";
    return new ProviderError("network", `${messageOf(apiCall)}; is the server at ${where} reachable?`, {
      cause: error,
    });
  }
  return new ProviderError("other", `provider call failed: ${messageOf(target)}`, { cause: error });
}

/** The error behind an AI SDK RetryError (the SDK's own retries already ran out). */
function lastAttempt(error: unknown): unknown {
  if (typeof error === "object" && error !== null && retryErrorMarker in error) {
    const last = (error as { lastError?: unknown }).lastError;
    if (last !== undefined) return last;
  }
  return error;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (
    typeof error === "object" &&
    error !== null &&
    typeof (error as { message?: unknown }).message === "string"
  ) {
    return (error as { message: string }).message;
  }
  return String(error);
}

/** The kinds (and server statuses) worth retrying unchanged: never overflow or auth. */
const retryableKinds: ReadonlySet<ProviderErrorKind> = new Set(["rate_limit", "network", "timeout"]);

/**
 * True when sending the same request again may succeed: rate limits, network failures, timeouts and server
 * errors (5xx, 408, 425). Overflow and auth failures never are.
 *
 * @example
 * if (isRetryableProviderError(classifyProviderError(error))) await retry();
 */
export function isRetryableProviderError(error: ProviderError): boolean {
  if (retryableKinds.has(error.kind)) return true;
  if (error.kind !== "other" || error.status === undefined) return false;
  return error.status >= 500 || error.status === 408 || error.status === 425;
}
