/**
 * How a tenant's session ids map to store ids. Session ids are per tenant: two tenants may each have a session
 * "abc". A tenant's new session is stored under `<tenant>/<id>`; only the tenant of sessions without an owner
 * (the CLI's sessions, tenant `local` of `ctxkit serve`) stores its new sessions under their plain id when it is
 * free. Sessions stored before (plain ids of any tenant) keep their ids. API ids never contain "/", so the two
 * forms cannot collide.
 */
import type { Message } from "../../model/message.ts";
import type { SessionDump } from "../../store/session-store.ts";

/**
 * An API session id: 1–200 characters, none of them whitespace, a control character or `/` (what a header, a path
 * and a store hold safely; `/` separates `<tenant>/<id>`), and not `.` or `..`, which URL clients resolve away
 * (`/v1/sessions/..` reaches `/v1/`), so such a session could never be read or deleted.
 */
const NOT_IN_API_SESSION_IDS = /[\s/\p{Cc}]/u;

/** What an API session id may be, for error messages. */
export const API_SESSION_ID_RULE =
  "1–200 characters without whitespace, control characters or slashes, and not . or ..";

/**
 * Whether a tenant may name a session so.
 *
 * @example
 * isApiSessionId("chat-1"); // true
 * isApiSessionId("a/b"); // false
 */
export function isApiSessionId(id: string): boolean {
  return id.length >= 1 && id.length <= 200 && id !== "." && id !== ".." && !NOT_IN_API_SESSION_IDS.test(id);
}

/** The prefix of the store ids of `/v1/sync` sessions (`sync:<tenant>:<id>`, see tenant-sync-state-store.ts). */
export const SYNC_STORE_ID_PREFIX = "sync:";

/** The prefix of the store ids of the sessions `/ready` writes and deletes to check the store can write. */
export const READY_PROBE_ID_PREFIX = "ready:";

/**
 * Whether an id has the form of the store ids the server keeps for itself (`/v1/sync` sessions', `/ready`'s
 * probes): an API session with such an id is never stored under it.
 */
export function isReservedStoreId(id: string): boolean {
  return id.startsWith(SYNC_STORE_ID_PREFIX) || id.startsWith(READY_PROBE_ID_PREFIX);
}

/**
 * The store id of a tenant's session (unless it is stored under its plain id).
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
