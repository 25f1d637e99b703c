/**
 * An error that already knows its HTTP answer: status, a stable snake_case code, a message that says what to
 * do, and any headers (`Retry-After`, `WWW-Authenticate`). Route handlers throw it; the error handler renders it.
 *
 * @example
 * throw new HttpError(409, "conflict", `session id "${id}" is taken; choose another id or leave it out`);
 */
export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, code: string, message: string, headers: Readonly<Record<string, string>> = {}) {
    super(message);
    this.name = "HttpError";
    this.status = status;
    this.code = code;
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
