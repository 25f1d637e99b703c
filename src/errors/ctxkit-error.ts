const marker = Symbol.for("ctxkit.error");

/**
 * Every error ctxkit raises on purpose has one of these codes. Codes are stable: the CLI maps them to exit
 * codes and the server to HTTP statuses, so callers may switch on them.
 */
export type CtxkitErrorCode =
  | "invalid_input"
  | "parse_error"
  | "unknown_format"
  | "not_found"
  | "context_overflow"
  | "concurrent_write"
  | "store_error"
  | "schema_too_new"
  | "corrupt_store"
  | "file_access"
  | "loop_detected"
  | "summarizer_failed"
  | "interrupted"
  | "provider_error"
  | "rate_limited"
  | "auth_error"
  | "timeout"
  | "network_error"
  | "config_error"
  | "cli_model_error"
  | "unsupported"
  | "missing_dependency"
  | HttpErrorCode;

/**
 * The codes only the server's HTTP answers carry (`HttpError`, `ctxkit/server`): a refused request, a missing
 * configuration, or an upstream model server's failure as the proxy reports it.
 */
export type HttpErrorCode =
  | "http_error"
  | "invalid_json"
  | "unsupported_media_type"
  | "payload_too_large"
  | "session_too_large"
  | "unauthorized"
  | "forbidden"
  | "forbidden_host"
  | "conflict"
  | "not_configured"
  | "previous_response_not_found"
  | "upstream_auth_failed"
  | "upstream_error"
  | "upstream_rejected"
  | "upstream_timeout";

/** Options shared by every ctxkit error. */
export interface CtxkitErrorOptions {
  /** The lower-level error that caused this one, if any. */
  cause?: unknown;
}

/**
 * Base class of every error ctxkit throws on purpose. The message always says what to do next.
 *
 * `CtxkitError.isInstance(error)` works across copies of the package (two versions in one dependency tree),
 * where `instanceof` would not.
 *
 * @example
 * ```ts
 * try { conversation.appendUser(input); }
 * catch (error) { if (CtxkitError.isInstance(error)) console.error(error.code, error.message); }
 * ```
 */
export class CtxkitError extends Error {
  /** Stable machine-readable code. */
  readonly code: CtxkitErrorCode;
  private readonly [marker] = true;

  constructor(code: CtxkitErrorCode, message: string, options: CtxkitErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.name = new.target.name;
  }

  /** True when `error` is a ctxkit error, whichever copy of ctxkit created it. */
  static isInstance(error: unknown): error is CtxkitError {
    return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[marker] === true;
  }

  /** A plain JSON form, safe to log or send over the wire (no stack, no cause). */
  toJSON(): { name: string; code: CtxkitErrorCode; message: string } {
    return { name: this.name, code: this.code, message: this.message };
  }
}
