import type { SessionRecord } from "../../store/session-store.ts";
import { HttpError } from "../http/http-error.ts";
import type { ServerContext } from "../server-context.ts";
import type { UpstreamOptions } from "../upstream/upstream-options.ts";

/**
 * The configured upstream, or 503 `not_configured` saying why there is none and what to do.
 *
 * @example
 * const upstream = requireUpstream(context);
 */
export function requireUpstream(context: ServerContext): UpstreamOptions {
  if (context.upstream === undefined) {
    throw new HttpError(
      503,
      "not_configured",
      `this server has no upstream model; ${
        context.upstreamUnavailable ?? "start it with --upstream <base-url> (and --model)"
      }`,
    );
  }
  return context.upstream;
}

/**
 * What follows a stored request: the session's reservation (if it was just created) is settled and the title
 * it was created with applied, and the tenant's live event stream hears of the commit. `stored` is the record the
 * commit wrote (read from the store when absent). Returns the stored session.
 *
 * @example
 * const { session: stored } = await exchange.complete(reply);
 * await commitFollowUp(context, tenant, claim, stored);
 */
export async function commitFollowUp(
  context: ServerContext,
  tenant: string,
  session: { readonly id: string; readonly storeId: string },
  stored?: SessionRecord,
): Promise<SessionRecord | undefined> {
  const reservation = context.directory.settle(tenant, session.storeId);
  let record = stored ?? (await context.store.getSession(session.storeId));
  if (reservation?.title !== undefined && record !== undefined) {
    record = await context.store.renameSession(session.storeId, reservation.title);
  }
  if (record === undefined) return undefined;
  context.hub.publish(tenant, {
    type: "committed",
    sessionId: session.id,
    messageCount: record.messageCount,
    turnCount: record.turnCount,
  });
  return record;
}
