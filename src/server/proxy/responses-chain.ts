import type { EngineSession } from "../../engine/engine-session.ts";
import type { Message } from "../../model/message.ts";
import { HttpError } from "../http/http-error.ts";
import { RESPONSE_ID_KEY } from "./responses-request.ts";

/** An assistant message of the conversation (not a summary). */
export const isReply = (message: Message): boolean =>
  message.role === "assistant" && message.kind === undefined;

/** The response a chained request names: its id, and its number for an id of the earlier numbered form. */
export interface PreviousResponse {
  readonly id: string;
  readonly legacySequence?: number;
}

/**
 * The session's latest reply: the newest reply of its history, found from the end (O(1) when it is recent, as
 * it is in a chain). When a summary stands after every visible reply, it may have replaced the latest one; then
 * every stored row (`allRows`, compacted ones included) is read instead.
 */
async function latestReply(
  session: EngineSession,
  allRows: () => Promise<readonly Message[]>,
): Promise<Message | undefined> {
  const found = await session.findLast((message) => isReply(message) || message.kind === "summary");
  if (found === undefined || isReply(found)) return found;
  let latest: Message | undefined;
  for (const message of await allRows())
    if (isReply(message) && (latest === undefined || message.seq > latest.seq)) latest = message;
  return latest;
}

/**
 * Checks that `previous` is the session's latest response, else a 409 `conflict` (ctxkit continues a session from
 * its latest response only). A reply stores the id it was answered under (`RESPONSE_ID_KEY`), so the check holds
 * across compactions, reloads and restarts. An id of the earlier form `resp_ck.<session>.<n>` (n counted the
 * session's replies) is the latest while the session holds exactly n replies, compacted ones included, and none
 * answered under a new id; reading them is O(history), once per such id.
 *
 * @example
 * await requireLatestResponse(lease.session, target.previous, () => store.loadMessages(id, { strategy: "all" }));
 */
export async function requireLatestResponse(
  session: EngineSession,
  previous: PreviousResponse,
  allRows: () => Promise<readonly Message[]>,
): Promise<void> {
  let rows: Promise<readonly Message[]> | undefined;
  const all = () => (rows ??= allRows());
  const latest = await latestReply(session, all);
  const stored = latest?.metadata?.[RESPONSE_ID_KEY];
  const isLatest =
    previous.legacySequence === undefined
      ? stored === previous.id
      : stored === undefined && (await all()).filter(isReply).length === previous.legacySequence;
  if (!isLatest) {
    throw new HttpError(
      409,
      "conflict",
      `previous_response_id '${previous.id}' is not the latest response of its session; ctxkit continues a ` +
        "session from its latest response only: continue from the latest response id, or fork the session " +
        "with POST /v1/sessions/:id/fork to branch",
    );
  }
}
