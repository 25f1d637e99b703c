/**
 * How a tenant's session ids map to store ids. Session ids are per tenant: two tenants may each have a session
 * "abc". A session is stored under its own id when that id is free in the store (so single-tenant stores,
 * sessions stored before ids were scoped, and the CLI keep plain ids), and under `<tenant>/<id>` when another
 * tenant (or the CLI) already uses the plain id. API ids never contain "/", so the two forms cannot collide.
 */
import type { Message } from "../../model/message.ts";
import type { SessionDump } from "../../store/session-store.ts";

/**
 * The store id a tenant's session takes when its plain id is used by someone else.
 *
 * @example
 * scopedSessionId("acme", "abc"); // "acme/abc"
 */
export function scopedSessionId(tenant: string, id: string): string {
  return `${tenant}/${id}`;
}

/**
 * The id a tenant knows a stored session by: the store id without the tenant's prefix.
 *
 * @example
 * publicSessionId("acme", "acme/abc"); // "abc"
 * publicSessionId("acme", "abc"); // "abc"
 */
export function publicSessionId(tenant: string, storeId: string): string {
  const prefix = `${tenant}/`;
  return storeId.startsWith(prefix) ? storeId.slice(prefix.length) : storeId;
}

/**
 * Messages as the tenant sees them: each `sessionId` its public id (the same array when none changes).
 *
 * @example
 * c.json({ messages: publicMessages(tenant, await store.loadMessages(storeId)) });
 */
export function publicMessages<M extends Pick<Message, "sessionId">>(
  tenant: string,
  messages: readonly M[],
): M[] {
  const prefix = `${tenant}/`;
  if (!messages.some((message) => message.sessionId.startsWith(prefix))) return messages as M[];
  return messages.map((message) => ({ ...message, sessionId: publicSessionId(tenant, message.sessionId) }));
}

/**
 * A session's dump as the tenant sees it (for its export): the session's, its parent's and its messages'
 * session ids are the tenant's.
 *
 * @example
 * const dump = publicDump(tenant, await store.dumpSession(storeId));
 */
export function publicDump(tenant: string, dump: SessionDump): SessionDump {
  const { session } = dump;
  if (!session.id.startsWith(`${tenant}/`) && !(session.parentId ?? "").startsWith(`${tenant}/`)) return dump;
  const messages = publicMessages(
    tenant,
    dump.rows.map((row) => row.message),
  );
  return {
    ...dump,
    session: {
      ...session,
      id: publicSessionId(tenant, session.id),
      ...(session.parentId !== undefined && { parentId: publicSessionId(tenant, session.parentId) }),
    },
    rows: dump.rows.map((row, index) => ({ ...row, message: messages[index]! })),
  };
}
