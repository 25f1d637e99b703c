import { APICallError, LoadAPIKeyError } from "@ai-sdk/provider";
import { RetryError } from "ai";
import { describe, expect, it } from "vitest";
import { ContextOverflowError, ValidationError } from "../errors/errors.ts";
import { ProviderError } from "../errors/provider-errors.ts";
import { classifyProviderError, isRetryableProviderError } from "./classify-provider-error.ts";

const urls = {
  openai: "https://api.openai.com/v1/responses",
  anthropic: "https://api.anthropic.com/v1/messages",
  gemini: "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent",
  ollama: "http://127.0.0.1:11434/v1/chat/completions",
};

/** An APICallError built the way the AI SDK's failed-response handlers build them. */
function apiError(
  url: string,
  statusCode: number,
  body: object,
  message: string,
  responseHeaders: Record<string, string> = {},
): APICallError {
  return new APICallError({
    message,
    url,
    requestBodyValues: { model: "m", messages: [] },
    statusCode,
    responseHeaders: { "content-type": "application/json", ...responseHeaders },
    responseBody: JSON.stringify(body),
    isRetryable: statusCode === 408 || statusCode === 409 || statusCode === 429 || statusCode >= 500,
  });
}

function socketError(code: string, address = "127.0.0.1", port = 11434): Error {
  return Object.assign(new Error(`connect ${code} ${address}:${port}`), {
    code,
    errno: -111,
    syscall: "connect",
    address,
    port,
  });
}

describe("classifyProviderError: HTTP statuses in each provider's shape", () => {
  it.each([
    [
      "OpenAI 400 context_length_exceeded",
      apiError(
        urls.openai,
        400,
        {
          error: {
            message:
              "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.",
            type: "invalid_request_error",
            param: "messages",
            code: "context_length_exceeded",
          },
        },
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.",
      ),
    ],
    [
      "Anthropic 400 prompt is too long",
      apiError(
        urls.anthropic,
        400,
        {
          type: "error",
          error: {
            type: "invalid_request_error",
            message: "prompt is too long: 215633 tokens > 200000 maximum",
          },
        },
        "prompt is too long: 215633 tokens > 200000 maximum",
      ),
    ],
    [
      "Anthropic 413 request_too_large",
      apiError(
        urls.anthropic,
        413,
        {
          type: "error",
          error: {
            type: "request_too_large",
            message: "Request exceeds the maximum allowed number of bytes.",
          },
        },
        "Request exceeds the maximum allowed number of bytes.",
      ),
    ],
    [
      "Gemini 400 input token count",
      apiError(
        urls.gemini,
        400,
        {
          error: {
            code: 400,
            message:
              "The input token count (1258291) exceeds the maximum number of tokens allowed (1048576).",
            status: "INVALID_ARGUMENT",
          },
        },
        "The input token count (1258291) exceeds the maximum number of tokens allowed (1048576).",
      ),
    ],
    [
      "vLLM behind openai-compatible, 400",
      apiError(
        "http://127.0.0.1:8000/v1/chat/completions",
        400,
        {
          object: "error",
          message:
            "This model's maximum context length is 8192 tokens. However, you requested 9321 tokens (8321 in the messages, 1000 in the completion).",
          type: "BadRequestError",
          code: 400,
        },
        "Bad Request",
      ),
    ],
  ])("%s is an overflow, never retried", (_label, error) => {
    const failure = classifyProviderError(error);
    expect(failure.kind).toBe("overflow");
    expect(failure.code).toBe("context_overflow");
    expect(failure.status).toBe(error.statusCode);
    expect(failure.message).toMatch(/compact the history/);
    expect(failure.cause).toBe(error);
    expect(isRetryableProviderError(failure)).toBe(false);
  });

  it("OpenAI 401 is auth and names OPENAI_API_KEY", () => {
    const failure = classifyProviderError(
      apiError(
        urls.openai,
        401,
        {
          error: {
            message: "Incorrect API key provided: sk-abc***def.",
            type: "invalid_request_error",
            param: null,
            code: "invalid_api_key",
          },
        },
        "Incorrect API key provided: sk-abc***def.",
      ),
    );
    expect([failure.kind, failure.code, failure.status]).toEqual(["auth", "auth_error", 401]);
    expect(failure.message).toContain("check OPENAI_API_KEY");
    expect(isRetryableProviderError(failure)).toBe(false);
  });

  it("Anthropic 401 names ANTHROPIC_API_KEY; Gemini's 400 API_KEY_INVALID is auth too", () => {
    const anthropic = classifyProviderError(
      apiError(
        urls.anthropic,
        401,
        { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } },
        "invalid x-api-key",
      ),
    );
    expect(anthropic.kind).toBe("auth");
    expect(anthropic.message).toContain("ANTHROPIC_API_KEY");
    const gemini = classifyProviderError(
      apiError(
        urls.gemini,
        400,
        {
          error: {
            code: 400,
            message: "API key not valid. Please pass a valid API key.",
            status: "INVALID_ARGUMENT",
            details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID" }],
          },
        },
        "API key not valid. Please pass a valid API key.",
      ),
    );
    expect(gemini.kind).toBe("auth");
    expect(gemini.message).toContain("GOOGLE_GENERATIVE_AI_API_KEY");
  });

  it("429 with retry-after in seconds, as an HTTP date, or only in the body", () => {
    const seconds = classifyProviderError(
      apiError(
        urls.anthropic,
        429,
        {
          type: "error",
          error: {
            type: "rate_limit_error",
            message: "This request would exceed your rate limit of 40,000 input tokens per minute.",
          },
        },
        "This request would exceed your rate limit of 40,000 input tokens per minute.",
        { "retry-after": "17" },
      ),
    );
    expect([seconds.kind, seconds.code, seconds.retryAfterMs]).toEqual([
      "rate_limit",
      "rate_limited",
      17_000,
    ]);
    expect(seconds.message).toContain("retry after 17s");

    const inTwoMinutes = new Date(Date.now() + 120_000).toUTCString();
    const dated = classifyProviderError(
      apiError(urls.openai, 429, { error: { message: "slow down" } }, "slow down", {
        "Retry-After": inTwoMinutes,
      }),
    );
    expect(dated.retryAfterMs).toBeGreaterThan(100_000);
    expect(dated.retryAfterMs).toBeLessThanOrEqual(120_000);

    const openaiBody = classifyProviderError(
      apiError(
        urls.openai,
        429,
        {
          error: {
            message:
              "Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 29000, Requested 2500. Please try again in 3.2s.",
            type: "tokens",
            code: "rate_limit_exceeded",
          },
        },
        "Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 29000, Requested 2500. Please try again in 3.2s.",
      ),
    );
    expect([openaiBody.kind, openaiBody.retryAfterMs]).toEqual(["rate_limit", 3_200]);

    const gemini = classifyProviderError(
      apiError(
        urls.gemini,
        429,
        {
          error: {
            code: 429,
            message: "You exceeded your current quota, please check your plan and billing details.",
            status: "RESOURCE_EXHAUSTED",
            details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "37s" }],
          },
        },
        "You exceeded your current quota, please check your plan and billing details.",
      ),
    );
    expect([gemini.kind, gemini.retryAfterMs]).toEqual(["rate_limit", 37_000]);
    expect(isRetryableProviderError(gemini)).toBe(true);
  });

  it("500 and Anthropic's 529 are retryable server errors; an Ollama 404 says to check the model", () => {
    const server = classifyProviderError(
      apiError(
        urls.openai,
        500,
        {
          error: { message: "The server had an error while processing your request.", type: "server_error" },
        },
        "The server had an error while processing your request.",
      ),
    );
    expect([server.kind, server.status, isRetryableProviderError(server)]).toEqual(["other", 500, true]);
    const overloaded = classifyProviderError(
      apiError(
        urls.anthropic,
        529,
        { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
        "Overloaded",
      ),
    );
    expect(isRetryableProviderError(overloaded)).toBe(true);
    const missingModel = classifyProviderError(
      apiError(
        urls.ollama,
        404,
        {
          error: {
            message: 'model "llama9" not found, try pulling it first',
            type: "api_error",
            param: null,
            code: null,
          },
        },
        'model "llama9" not found, try pulling it first',
      ),
    );
    expect(missingModel.kind).toBe("other");
    expect(missingModel.message).toContain(
      "check the model name and the base URL (http://127.0.0.1:11434/v1)",
    );
    expect(isRetryableProviderError(missingModel)).toBe(false);
  });

  it("an Ollama 400 that is not an overflow stays a non-retryable request error with the server's words", () => {
    const failure = classifyProviderError(
      apiError(
        urls.ollama,
        400,
        { error: { message: "invalid message format", type: "invalid_request_error" } },
        "Bad Request",
      ),
    );
    expect([failure.kind, failure.status]).toEqual(["other", 400]);
    expect(failure.message).toContain("invalid message format");
    expect(isRetryableProviderError(failure)).toBe(false);
  });
});

describe("classifyProviderError: transport failures", () => {
  it("a bare ECONNREFUSED asks whether the server is running", () => {
    const failure = classifyProviderError(socketError("ECONNREFUSED"));
    expect([failure.kind, failure.code]).toEqual(["network", "network_error"]);
    expect(failure.message).toContain("is the server at 127.0.0.1:11434 running?");
  });

  it("ECONNREFUSED wrapped by the SDK names the base URL", () => {
    const wrapped = new APICallError({
      message: "Cannot connect to API: connect ECONNREFUSED 127.0.0.1:11434",
      url: urls.ollama,
      requestBodyValues: {},
      cause: socketError("ECONNREFUSED"),
      isRetryable: true,
    });
    const failure = classifyProviderError(wrapped);
    expect(failure.kind).toBe("network");
    expect(failure.message).toContain("is the server at http://127.0.0.1:11434/v1 running?");
  });

  it("undici timeouts and DNS failures inside fetch's TypeError", () => {
    const headersTimeout = new TypeError("fetch failed", {
      cause: Object.assign(new Error("Headers Timeout Error"), { code: "UND_ERR_HEADERS_TIMEOUT" }),
    });
    expect(classifyProviderError(headersTimeout).kind).toBe("timeout");
    const dns = new TypeError("fetch failed", {
      cause: Object.assign(new Error("getaddrinfo ENOTFOUND api.example.invalid"), {
        code: "ENOTFOUND",
        hostname: "api.example.invalid",
      }),
    });
    const failure = classifyProviderError(dns);
    expect(failure.kind).toBe("network");
    expect(failure.message).toContain("check the base URL");
  });

  it("an AggregateError of refused connections (IPv4 and IPv6) is a network error", () => {
    const aggregate = new AggregateError(
      [socketError("ECONNREFUSED", "::1"), socketError("ECONNREFUSED", "127.0.0.1")],
      "",
    );
    expect(classifyProviderError(new TypeError("fetch failed", { cause: aggregate })).kind).toBe("network");
  });

  it("a TimeoutError from AbortSignal.timeout is a timeout", () => {
    const timeout = new DOMException("The operation was aborted due to timeout", "TimeoutError");
    expect(classifyProviderError(timeout).kind).toBe("timeout");
  });
});

describe("classifyProviderError: SDK and ctxkit errors", () => {
  it("a LoadAPIKeyError is auth and says which variable to set", () => {
    const failure = classifyProviderError(new LoadAPIKeyError({ message: "OpenAI API key is missing." }), {
      provider: "openai",
    });
    expect(failure.kind).toBe("auth");
    expect(failure.message).toContain("set OPENAI_API_KEY");
  });

  it("a RetryError is classified by its last error", () => {
    const limited = apiError(
      urls.openai,
      429,
      { error: { message: "Rate limit reached" } },
      "Rate limit reached",
      {
        "retry-after": "1",
      },
    );
    const retry = new RetryError({
      message: "Failed after 3 attempts",
      reason: "maxRetriesExceeded",
      errors: [limited, limited],
    });
    const failure = classifyProviderError(retry);
    expect([failure.kind, failure.retryAfterMs]).toEqual(["rate_limit", 1_000]);
    expect(failure.cause).toBe(retry);
  });

  it("returns a ProviderError unchanged and wraps ctxkit's own overflow refusal as overflow", () => {
    const existing = new ProviderError("rate_limit", "slow down", { retryAfterMs: 5 });
    expect(classifyProviderError(existing)).toBe(existing);
    const refusal = new ContextOverflowError({
      requiredTokens: 10,
      windowTokens: 5,
      reservedOutputTokens: 1,
    });
    expect(classifyProviderError(refusal).kind).toBe("overflow");
    expect(classifyProviderError(new ValidationError("bad input")).kind).toBe("other");
  });

  it("anything unrecognised is `other` with the original message", () => {
    const failure = classifyProviderError(new Error("something odd"));
    expect(failure.kind).toBe("other");
    expect(failure.message).toContain("something odd");
    expect(isRetryableProviderError(failure)).toBe(false);
  });
});

describe("classifyProviderError: no key in any message", () => {
  it.each([
    [
      "an OpenAI key",
      urls.openai,
      401,
      "Incorrect API key provided: sk-proj-Quoted0123456789abcdef.",
      "sk-proj-Quoted0123456789abcdef",
    ],
    [
      "a Gemini key in the URL",
      `${urls.gemini}?key=AIzaSyQuoted0123456789abcdefghijklmnop`,
      404,
      "models/x is not found; see https://x/?key=AIzaSyQuoted0123456789abcdefghijklmnop",
      "AIzaSyQuoted0123456789abcdefghijklmnop",
    ],
    [
      "a bearer token",
      urls.ollama,
      500,
      "upstream said: Authorization: Bearer tok_local_0123456789",
      "tok_local_0123456789",
    ],
  ])("%s is redacted from the typed error", (_label, url, status, message, key) => {
    const failure = classifyProviderError(apiError(url, status, { error: { message } }, message));
    expect(failure).toBeInstanceOf(ProviderError);
    expect(failure.message).not.toContain(key);
    expect(failure.message).toContain("[redacted]");
  });

  it("a key of any shape given as context.secrets is redacted too, and so is one the caller typed itself", () => {
    const key = "plain-local-key-4711";
    const error = apiError(urls.ollama, 401, {}, `Incorrect API key provided: ${key}`);
    expect(classifyProviderError(error).message).toContain(key); // unknown shape, not named: cannot be known
    const failure = classifyProviderError(error, { secrets: [key, undefined] });
    expect(failure.message).not.toContain(key);
    expect(failure).toMatchObject({ kind: "auth", status: 401 });
    expect(new ProviderError("other", "refused sk-ant-api03-Typed0123456789abcdef").message).toBe(
      "refused [redacted]",
    );
  });
});
