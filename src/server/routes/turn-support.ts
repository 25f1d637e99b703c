import { HttpError } from "../http/http-error.ts";
import type { ServerContext } from "../server-context.ts";
import type { UpstreamOptions } from "../upstream/upstream-options.ts";

/**
 * The configured upstream, or 503 `not_configured`.
 *
 * @example
 * const upstream = requireUpstream(context);
 */
export function requireUpstream(context: ServerContext): UpstreamOptions {
  if (context.upstream === undefined) {
    throw new HttpError(
      503,
      "not_configured",
      "this server has no upstream model; start it with --upstream <base-url> (and --model)",
    );
  }
  return context.upstream;
}

/**
 * What follows a stored request: the session's reservation (if it was just created) is settled and the title
 * it was created with applied, and the tenant's live event stream hears of the commit.
 *
 * @example
 * await exchange.complete(reply);
 * await commitFollowUp(context, tenant, sessionId);
 */
export async function commitFollowUp(
  context: ServerContext,
  tenant: string,
  sessionId: string,
): Promise<void> {
  const reservation = context.directory.settle(sessionId);
  let record = await context.store.getSession(sessionId);
  if (reservation?.title !== undefined && record !== undefined) {
    record = await context.store.renameSession(sessionId, reservation.title);
  }
  if (record === undefined) return;
  context.hub.publish(tenant, {
    type: "committed",
    sessionId,
    messageCount: record.messageCount,
    turnCount: record.turnCount,
  });
}
