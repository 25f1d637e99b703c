import { randomUUID } from "node:crypto";
import { HttpError } from "../http/http-error.ts";
import { API_SESSION_ID_RULE, isApiSessionId } from "../tenancy/tenant-session-id.ts";
import { parseResponseId, previousResponseNotFound, type ResponsesRequest } from "./responses-request.ts";

/** Which session a Responses request belongs to, if any. */
export type ResponsesTarget =
  | { readonly kind: "stateless" }
  | {
      readonly kind: "session";
      readonly id: string;
      /** The response a chained request continues: its id (and number, for an id of the earlier form). */
      readonly previous?: { readonly id: string; readonly legacySequence?: number };
    };

/**
 * The mode of a Responses request (see `registerResponsesRoute`): `previous_response_id` names a stored session
 * of the tenant (else 404 `previous_response_not_found`), then `X-Ctxkit-Session`, then `store: false` means
 * stateless, and anything else starts a new session. `X-Ctxkit-Mode: stateless` forces stateless.
 *
 * @example
 * const target = await responsesTarget(request, { session: "s1" }, (id) => directory.find(tenant, id));
 */
export async function responsesTarget(
  request: ResponsesRequest,
  headers: { readonly session?: string | undefined; readonly mode?: string | undefined },
  find: (sessionId: string) => Promise<{ readonly kind: string } | undefined>,
): Promise<ResponsesTarget> {
  const mode = headers.mode;
  if (mode !== undefined && mode !== "stateless" && mode !== "stateful") {
    throw new HttpError(400, "invalid_input", "X-Ctxkit-Mode must be stateless or stateful");
  }
  if (mode === "stateless") {
    if (typeof request.previous_response_id === "string") {
      throw new HttpError(
        400,
        "invalid_input",
        "previous_response_id needs stateful mode: drop X-Ctxkit-Mode",
      );
    }
    return { kind: "stateless" };
  }
  const header = headers.session;
  if (header !== undefined && !isApiSessionId(header)) {
    throw new HttpError(400, "invalid_input", `X-Ctxkit-Session must be ${API_SESSION_ID_RULE}`);
  }
  const previous = request.previous_response_id;
  if (typeof previous === "string") {
    const { sessionId, legacySequence } = parseResponseId(previous);
    if (header !== undefined && header !== sessionId) {
      throw new HttpError(
        400,
        "invalid_input",
        "previous_response_id belongs to another session than X-Ctxkit-Session",
      );
    }
    const owned = await find(sessionId);
    if (owned?.kind !== "stored") throw previousResponseNotFound(previous);
    return {
      kind: "session",
      id: sessionId,
      previous: { id: previous, ...(legacySequence !== undefined && { legacySequence }) },
    };
  }
  if (header !== undefined) return { kind: "session", id: header };
  if (request.store === false) return { kind: "stateless" };
  return { kind: "session", id: `resp-${randomUUID()}` };
}
