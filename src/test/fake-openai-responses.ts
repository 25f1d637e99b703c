import type { JsonValue } from "../model/message.ts";

/** A tool call the fake model makes. `arguments` may be given as JSON (it is serialised) or as raw text. */
export interface FakeToolCall {
  /** Default `call_<request>_<position>`. */
  readonly id?: string;
  readonly name: string;
  readonly arguments?: string | JsonValue;
}

/** Token usage to report. Missing figures are estimated (one token per 4 characters). */
export interface FakeUsage {
  readonly promptTokens?: number;
  readonly completionTokens?: number;
  /** Reported as `prompt_tokens_details.cached_tokens`. */
  readonly cachedTokens?: number;
  /** Reported as `completion_tokens_details.reasoning_tokens`. */
  readonly reasoningTokens?: number;
}

/** A successful answer: text and/or tool calls. */
export interface FakeCompletion {
  readonly text?: string;
  /** Sent as `reasoning_content`, as OpenAI-compatible reasoning servers do. */
  readonly reasoning?: string;
  readonly toolCalls?: readonly FakeToolCall[];
  /** Default `tool_calls` when there are tool calls, else `stop`. */
  readonly finishReason?: "stop" | "length" | "tool_calls" | "content_filter";
  readonly usage?: FakeUsage;
  /** The model name to report. Default: the requested model. */
  readonly model?: string;
  /** Wait this long before answering (e.g. to test timeouts and aborts). */
  readonly delayMs?: number;
  /** Streaming: characters per content delta. Default 8. */
  readonly chunkSize?: number;
  /** Streaming: close the connection after this many chunks, without `[DONE]` (a dropped stream). */
  readonly disconnectAfterChunks?: number;
}

/** An HTTP error with OpenAI's error body `{ error: { message, type, param, code } }` (or a raw `body`). */
export interface FakeErrorResponse {
  readonly status: number;
  readonly error?: {
    readonly message: string;
    readonly type?: string;
    readonly param?: string | null;
    readonly code?: string | null;
  };
  /** Sent as-is instead of the error object (a string is sent as plain text). */
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  readonly delayMs?: number;
}

/** The connection is closed without any response (a network failure). */
export interface FakeDisconnect {
  readonly disconnect: true;
}

/** What the fake server answers one request with. A string is shorthand for `{ text }`. */
export type FakeOpenAIResponse = string | FakeCompletion | FakeErrorResponse | FakeDisconnect;

/**
 * OpenAI's 400 for a prompt over the window (`code: "context_length_exceeded"`), with its real message shape.
 *
 * @example
 * startFakeOpenAIServer({ responses: [contextLengthExceeded({ maxTokens: 8_192, requestedTokens: 9_000 })] });
 */
export function contextLengthExceeded(
  options: { maxTokens?: number; requestedTokens?: number } = {},
): FakeErrorResponse {
  const maxTokens = options.maxTokens ?? 128_000;
  const requestedTokens = options.requestedTokens ?? maxTokens + 1_000;
  return {
    status: 400,
    error: {
      message:
        `This model's maximum context length is ${maxTokens} tokens. However, your messages resulted in ` +
        `${requestedTokens} tokens. Please reduce the length of the messages.`,
      type: "invalid_request_error",
      param: "messages",
      code: "context_length_exceeded",
    },
  };
}

/**
 * OpenAI's 429 with a `retry-after` header (seconds; `retry-after-ms` too when `retryAfterMs` is given).
 *
 * @example
 * startFakeOpenAIServer({ responses: [rateLimited({ retryAfterSeconds: 0 }), "ok"] });
 */
export function rateLimited(
  options: { retryAfterSeconds?: number; retryAfterMs?: number } = {},
): FakeErrorResponse {
  const seconds = options.retryAfterSeconds ?? 1;
  return {
    status: 429,
    headers: {
      "retry-after": String(seconds),
      ...(options.retryAfterMs !== undefined && { "retry-after-ms": String(options.retryAfterMs) }),
    },
    error: {
      message: `Rate limit reached for requests. Please try again in ${seconds}s.`,
      type: "requests",
      param: null,
      code: "rate_limit_exceeded",
    },
  };
}

/**
 * OpenAI's 401 for a wrong API key.
 *
 * @example
 * startFakeOpenAIServer({ responses: [invalidApiKey()] });
 */
export function invalidApiKey(): FakeErrorResponse {
  return {
    status: 401,
    error: {
      message:
        "Incorrect API key provided: sk-fake. You can find your API key at https://platform.openai.com/account/api-keys.",
      type: "invalid_request_error",
      param: null,
      code: "invalid_api_key",
    },
  };
}

/**
 * A 500 from the provider (retryable).
 *
 * @example
 * startFakeOpenAIServer({ responses: [serverError(), "recovered"] });
 */
export function serverError(
  message = "The server had an error while processing your request.",
): FakeErrorResponse {
  return { status: 500, error: { message, type: "server_error", param: null, code: null } };
}

/** True for the error variant of a scripted response. */
export function isFakeError(response: FakeOpenAIResponse): response is FakeErrorResponse {
  return typeof response === "object" && "status" in response;
}

/** True for the disconnect variant of a scripted response. */
export function isFakeDisconnect(response: FakeOpenAIResponse): response is FakeDisconnect {
  return typeof response === "object" && "disconnect" in response;
}
