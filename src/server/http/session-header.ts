import { API_SESSION_ID_RULE, isApiSessionId } from "../tenancy/tenant-session-id.ts";
import { HttpError } from "./http-error.ts";

/**
 * The session id an `X-Ctxkit-Session` header names, or undefined without one. HTTP header values are Latin-1, so an
 * id with other characters (`会话-1`) is sent percent-encoded as UTF-8 (`%E4%BC%9A%E8%AF%9D-1`, what
 * `encodeURIComponent` gives) and decoded here; an id without `%` is taken as it is. Throws a 400 for a malformed
 * encoding, and for an id that is not an API session id (see `isApiSessionId`).
 *
 * @example
 * sessionIdFromHeader("%E4%BC%9A%E8%AF%9D-1"); // "会话-1"
 */
export function sessionIdFromHeader(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let id = value;
  if (value.includes("%")) {
    try {
      id = decodeURIComponent(value);
    } catch {
      throw new HttpError(
        400,
        "invalid_input",
        "X-Ctxkit-Session is not valid percent-encoding; encode ids outside Latin-1 with encodeURIComponent",
      );
    }
  }
  if (!isApiSessionId(id))
    throw new HttpError(400, "invalid_input", `X-Ctxkit-Session must be ${API_SESSION_ID_RULE}`);
  return id;
}

/**
 * A session id as an `X-Ctxkit-Session` response header: as it is when it is printable ASCII without `%`,
 * percent-encoded otherwise (the form `sessionIdFromHeader` reads back).
 *
 * @example
 * sessionHeaderValue("会话-1"); // "%E4%BC%9A%E8%AF%9D-1"
 */
export function sessionHeaderValue(id: string): string {
  return /^[\x21-\x7e]*$/.test(id) && !id.includes("%") ? id : encodeURIComponent(id);
}
