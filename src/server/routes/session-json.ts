import { EMPTY_USAGE_TOTALS } from "../../store/usage-totals.ts";
import type { SessionRecord } from "../../store/session-store.ts";
import type { OwnedSession, Reservation } from "../tenancy/session-directory.ts";
import { publicSessionId } from "../tenancy/tenant-session-id.ts";

/** A session as the API shows it: the stored record without its owner, plus `stored`. */
export type SessionJson = Omit<SessionRecord, "owner" | "executorSessionIds"> & { readonly stored: boolean };

/**
 * The API form of a tenant's stored session: its ids (and its parent's) as the tenant knows them.
 *
 * @example
 * c.json({ session: storedSessionJson(record, tenant) });
 */
export function storedSessionJson(record: SessionRecord, tenant: string): SessionJson {
  const { owner: _owner, executorSessionIds: _executors, ...rest } = record;
  return {
    ...rest,
    id: publicSessionId(tenant, record.id),
    ...(record.parentId !== undefined && { parentId: publicSessionId(tenant, record.parentId) }),
    stored: true,
  };
}

/**
 * The API form of a session reserved until its first turn: counters at zero.
 *
 * @example
 * c.json({ session: reservedSessionJson(reservation) }, 201);
 */
export function reservedSessionJson(reservation: Reservation): SessionJson {
  return {
    id: reservation.id,
    ...(reservation.title !== undefined && { title: reservation.title }),
    createdAt: reservation.createdAt,
    updatedAt: reservation.createdAt,
    messageCount: 0,
    turnCount: 0,
    nextSeq: 0,
    usage: EMPTY_USAGE_TOTALS,
    cost: 0,
    metadata: {},
    stored: false,
  };
}

/**
 * The API form of a tenant's session, stored or reserved.
 *
 * @example
 * c.json({ session: sessionJson(await directory.require(tenant, id), tenant) });
 */
export function sessionJson(owned: OwnedSession, tenant: string): SessionJson {
  return owned.kind === "stored"
    ? storedSessionJson(owned.record, tenant)
    : reservedSessionJson(owned.reservation);
}
