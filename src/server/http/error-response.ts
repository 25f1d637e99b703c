import { CtxkitError, type CtxkitErrorCode } from "../../errors/ctxkit-error.ts";
import { ProviderError } from "../../errors/provider-errors.ts";
import { ConcurrentWriteError, ValidationError } from "../../errors/errors.ts";
import { HttpError } from "./http-error.ts";
import { redactSecrets } from "../../errors/redact-secrets.ts";

/** What an error becomes on the wire. */
export interface ErrorAnswer {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Problems of a validation error, by path. */
  readonly issues?: readonly { path: string; message: string }[];
  /**
   * What the answer leaves out: a server-side failure's own message (database text, file paths, hosts) goes to
   * the server log, never to the client.
   */
  readonly hidden?: string;
}

/** What the client is told of a server-side failure, whose details are in the server log only. */
function serverSideMessage(code: string, status: number): string {
  if (status === 503) return "the server's database is busy or unreachable; retry shortly";
  if (code === "store_error")
    return "the server's database failed this request; the details are in the server log";
  return `the server failed to handle this request (${code}); the details are in the server log`;
}

const statusOfCode: Partial<Record<CtxkitErrorCode, number>> = {
  invalid_input: 400,
  parse_error: 400,
  unknown_format: 400,
  context_overflow: 400,
  loop_detected: 400,
  not_found: 404,
  concurrent_write: 409,
  interrupted: 409,
  unsupported: 400,
  rate_limited: 429,
  auth_error: 502,
  provider_error: 502,
  network_error: 502,
  summarizer_failed: 502,
  timeout: 504,
  config_error: 500,
  schema_too_new: 500,
  corrupt_store: 500,
  missing_dependency: 500,
};

function fromProvider(error: ProviderError): ErrorAnswer {
  const retryAfter: Record<string, string> =
    error.retryAfterMs === undefined ? {} : { "Retry-After": String(Math.ceil(error.retryAfterMs / 1000)) };
  switch (error.kind) {
    case "overflow":
      return { status: 400, code: "context_overflow", message: error.message, headers: {} };
    case "auth":
      return {
        status: 502,
        code: "upstream_auth_failed",
        message: `the upstream model server refused this server's key: ${error.message}`,
        headers: {},
      };
    case "rate_limit":
      return { status: 429, code: "rate_limited", message: error.message, headers: retryAfter };
    case "timeout":
      return { status: 504, code: "upstream_timeout", message: error.message, headers: {} };
    default:
      return { status: 502, code: "upstream_error", message: error.message, headers: {} };
  }
}

/**
 * A concurrent write's message for the client: the session named by the id the client sent (a tenant's session is
 * stored as `<tenant>/<id>`; neither part holds a `/`), and what to do over HTTP.
 */
function concurrentWriteMessage(error: ConcurrentWriteError): string {
  const stored = error.sessionId;
  const id = stored.slice(stored.indexOf("/") + 1);
  return error.message
    .replace(`session ${stored}:`, `session ${id}:`)
    .replace(
      /; reload the session and retry the write$/,
      "; nothing of this request was stored — send it again",
    );
}

/**
 * Maps any thrown value to its HTTP answer: `HttpError` as is, ctxkit errors by their stable code (provider
 * failures become 429/502/504 upstream errors), anything else a 500 that reveals nothing of the failure.
 *
 * @example
 * const answer = errorAnswer(new NotFoundError("session", "s1")); // { status: 404, code: "not_found", … }
 */
export function errorAnswer(error: unknown): ErrorAnswer {
  if (error instanceof HttpError) {
    return { status: error.status, code: error.code, message: error.message, headers: error.headers };
  }
  if (error instanceof ProviderError) return fromProvider(error);
  if (error instanceof ConcurrentWriteError) {
    return { status: 409, code: error.code, message: concurrentWriteMessage(error), headers: {} };
  }
  if (CtxkitError.isInstance(error)) {
    const retryable = error.code === "store_error" && (error as { retryable?: boolean }).retryable === true;
    const status = error.code === "store_error" ? (retryable ? 503 : 500) : (statusOfCode[error.code] ?? 500);
    if (status >= 500) {
      const message = serverSideMessage(error.code, status);
      return { status, code: error.code, message, headers: {}, hidden: error.message };
    }
    return {
      status,
      code: error.code,
      message: error.message,
      headers: {},
      ...(error instanceof ValidationError && error.issues.length > 0 && { issues: error.issues }),
    };
  }
  return {
    status: 500,
    code: "internal_error",
    message: "the server failed to handle this request; the failure is in the server log",
    headers: {},
    hidden: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
  };
}

/**
 * Writes what an answer hid from its client to the server log (redacted), with the request's id.
 *
 * @example
 * logHidden(context.log, c.get("requestId"), answer);
 */
export function logHidden(
  log: (line: string) => void,
  requestId: string | undefined,
  answer: ErrorAnswer,
): void {
  if (answer.hidden !== undefined)
    log(`error ${requestId ?? "-"} ${answer.code}: ${redactSecrets(answer.hidden)}`);
}

/**
 * The ctxkit error body: `{ error: { code, message, issues? } }`.
 *
 * @example
 * return c.json(errorBody(answer), answer.status);
 */
export function errorBody(answer: ErrorAnswer): {
  error: { code: string; message: string; issues?: unknown };
} {
  return {
    error: {
      code: answer.code,
      message: answer.message,
      ...(answer.issues !== undefined && { issues: answer.issues }),
    },
  };
}

const openAITypes: Readonly<Record<number, string>> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  409: "conflict_error",
  413: "invalid_request_error",
  415: "invalid_request_error",
  429: "rate_limit_error",
};

/**
 * The OpenAI-compatible error body of `/v1/chat/completions`, so OpenAI SDKs raise their usual errors.
 *
 * @example
 * openAIErrorBody({ status: 404, code: "not_found", message: "session \"s1\" not found", headers: {} });
 */
export function openAIErrorBody(answer: ErrorAnswer): {
  error: { message: string; type: string; param: null; code: string };
} {
  const type =
    openAITypes[answer.status] ?? (answer.status >= 500 ? "server_error" : "invalid_request_error");
  return { error: { message: answer.message, type, param: null, code: answer.code } };
}

const anthropicTypes: Readonly<Record<number, string>> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  409: "conflict_error",
  413: "request_too_large",
  429: "rate_limit_error",
  504: "timeout_error",
  529: "overloaded_error",
};

/**
 * The error type Anthropic uses for an HTTP status (`invalid_request_error`, `rate_limit_error`, `api_error`, …).
 *
 * @example
 * anthropicErrorType(429); // "rate_limit_error"
 */
export function anthropicErrorType(status: number): string {
  return anthropicTypes[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
}

/**
 * Anthropic's error body, `{ type: "error", error: { type, message } }`, for the Messages routes (Anthropic SDKs
 * and Claude Code read it); ctxkit's own code is kept beside it.
 *
 * @example
 * return c.json(anthropicErrorBody(answer), answer.status);
 */
export function anthropicErrorBody(answer: ErrorAnswer): {
  type: "error";
  error: { type: string; message: string; code: string };
} {
  return {
    type: "error",
    error: { type: anthropicErrorType(answer.status), message: answer.message, code: answer.code },
  };
}
