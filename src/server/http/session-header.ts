import { API_SESSION_ID_RULE, isApiSessionId } from "../tenancy/tenant-session-id.ts";
import { HttpError } from "./http-error.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * What a header value means when it is raw UTF-8 read as Latin-1 (one character per byte, as HTTP reads header
 * values): the decoded text when the value has a byte of 0x80 or above and its bytes are valid UTF-8, else
 * undefined. `café` sent raw by curl arrives as `cafÃ©`.
 */
function rawUtf8(value: string): string | undefined {
  let high = false;
  for (let index = 0; index < value.length; index++) {
    const code = value.charCodeAt(index);
    if (code > 0xff) return undefined;
    if (code >= 0x80) high = true;
  }
  if (!high) return undefined;
  try {
    return utf8.decode(Buffer.from(value, "latin1"));
  } catch {
    return undefined;
  }
}

/**
 * The session id an `X-Ctxkit-Session` header names, or undefined without one. HTTP header values are Latin-1, so an
 * id with other characters (`会话-1`) is sent percent-encoded as UTF-8 (`%E4%BC%9A%E8%AF%9D-1`, what
 * `encodeURIComponent` gives) and decoded here; an id without `%` is taken as it is. Throws a 400 for a malformed
 * encoding, for raw UTF-8 bytes (`café` sent unencoded arrives as `cafÃ©`: refused rather than stored under a
 * name the client did not mean, or guessed), and for an id that is not an API session id (see `isApiSessionId`).
 *
 * @example
 * sessionIdFromHeader("%E4%BC%9A%E8%AF%9D-1"); // "会话-1"
 */
export function sessionIdFromHeader(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const meant = rawUtf8(value);
  if (meant !== undefined) {
    throw new HttpError(
      400,
      "invalid_input",
      `X-Ctxkit-Session holds raw UTF-8 bytes; percent-encode the id as UTF-8 (encodeURIComponent): X-Ctxkit-Session: ${sessionHeaderValue(meant)}`,
    );
  }
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

/**
 * The session a request of a whole-history API (chat completions, Messages) is served in: the one its
 * `X-Ctxkit-Session` header names, unless `X-Ctxkit-Mode: stateless`; undefined for a stateless request. A 400
 * for another mode, or for `stateful` without a session header.
 *
 * @example
 * const sessionId = requestedSession((name) => c.req.header(name));
 */
export function requestedSession(header: (name: string) => string | undefined): string | undefined {
  const mode = header("x-ctxkit-mode");
  if (mode !== undefined && mode !== "stateless" && mode !== "stateful") {
    throw new HttpError(400, "invalid_input", "X-Ctxkit-Mode must be stateless or stateful");
  }
  const sessionId = sessionIdFromHeader(header("x-ctxkit-session"));
  if (sessionId !== undefined && mode !== "stateless") return sessionId;
  if (mode === "stateful")
    throw new HttpError(400, "invalid_input", "stateful mode needs an X-Ctxkit-Session header");
  return undefined;
}
