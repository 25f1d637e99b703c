import { CtxkitError, type CtxkitErrorCode } from "../../errors/ctxkit-error.ts";

/**
 * A ctxkit error that already knows its HTTP answer: status, its code, a message that says what to do, and any
 * headers (`Retry-After`, `WWW-Authenticate`). Route handlers throw it; the error handler renders it. Being a
 * `CtxkitError`, it is recognised by its code wherever it travels: an upstream's `context_overflow` reaches the
 * engine's recovery as that code, not as text.
 *
 * @example
 * throw new HttpError(409, "conflict", `session id "${id}" is taken; choose another id or leave it out`);
 */
export class HttpError extends CtxkitError {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    status: number,
    code: CtxkitErrorCode,
    message: string,
    headers: Readonly<Record<string, string>> = {},
  ) {
    super(code, message);
    this.status = status;
    this.headers = headers;
  }
}

/**
 * The 404 every unknown or foreign id gets: the same body whoever owns the id, so it reveals nothing.
 *
 * @example
 * if (record?.owner !== tenant) throw notFound("session", id);
 */
export function notFound(kind: string, id: string): HttpError {
  return new HttpError(404, "not_found", `${kind} "${id}" not found`);
}
