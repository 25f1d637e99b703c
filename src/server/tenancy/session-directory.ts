import { NotFoundError } from "../../errors/errors.ts";
import { systemClock, type Clock, type IdGenerator, randomIds } from "../../model/ids.ts";
import type { SessionFilter, SessionRecord, SessionStore } from "../../store/session-store.ts";
import { HttpError, notFound } from "../http/http-error.ts";
import {
  API_SESSION_ID_RULE,
  isApiSessionId,
  isReservedStoreId,
  scopedSessionId,
} from "./tenant-session-id.ts";

/** A session created with `POST /v1/sessions` that has no stored turn yet. */
export interface Reservation {
  /** The id the tenant knows it by. */
  readonly id: string;
  /** The id it will be stored under (see `tenant-session-id.ts`). */
  readonly storeId: string;
  readonly tenant: string;
  readonly createdAt: string;
  readonly title?: string;
}

/** A tenant's session: stored, or reserved until its first turn. `id` is the tenant's, `storeId` the store's. */
export type OwnedSession =
  | { readonly kind: "stored"; readonly id: string; readonly storeId: string; readonly record: SessionRecord }
  | {
      readonly kind: "reserved";
      readonly id: string;
      readonly storeId: string;
      readonly reservation: Reservation;
    };

/** A tenant's stored session. */
export type StoredSession = Extract<OwnedSession, { kind: "stored" }>;

/**
 * A session a request writes to; `release()` when the request has ended, stored or not. `created` is true when
 * this claim made the session (the id was free for the tenant).
 */
export type SessionClaim = OwnedSession & { readonly created: boolean; release(): void };

/** Options of `SessionDirectory`. */
export interface SessionDirectoryOptions {
  readonly clock?: Clock;
  readonly ids?: IdGenerator;
  /** Most sessions without a turn one tenant may hold (default 10,000). */
  readonly maxReservationsPerTenant?: number;
  /** Most sessions without a turn all tenants together may hold (default 100,000). */
  readonly maxReservations?: number;
  /** The tenant that owns sessions stored without an owner (see `ServerOptions.unownedSessionsTenant`). */
  readonly unownedSessionsTenant?: string;
}

interface Entry {
  readonly reservation: Reservation;
  /** Made by `POST /v1/sessions`: kept until its first turn is stored or it is deleted. */
  explicit: boolean;
  /** Requests writing to it now; a request's own entry goes when the last of them ends. */
  holders: number;
}

/** A 400 before anything is read or sent upstream for an id no tenant can have (a NUL, 5,000 characters). */
function checkApiSessionId(id: string): void {
  if (!isApiSessionId(id)) {
    throw new HttpError(400, "invalid_input", `invalid session id: a session id is ${API_SESSION_ID_RULE}`);
  }
}

const conflict = (id: string) =>
  new HttpError(409, "conflict", `session id "${id}" is taken; choose another id or leave it out`);

/**
 * Who owns which session, with session ids scoped to their tenant: two tenants may each have a session "abc",
 * and nothing one tenant does (create, claim, delete) changes what another sees or may do. Every lookup answers
 * `undefined` — and every `require` the same 404 — for an unknown id and for another tenant's id alike.
 *
 * A session created over the API is reserved in memory until its first turn is stored; a request that writes
 * to a new id holds a reservation only while it runs, so a failed request leaves nothing behind. Reservations
 * are bounded per tenant and in total.
 *
 * A stored session's owner is the tenant it was created for. One without an owner (made outside the server: by
 * the CLI, or by code that gives none) belongs to `unownedSessionsTenant` when there is one, else to no tenant.
 *
 * @example
 * const owned = await directory.require("acme", "ses_1"); // 404 HttpError when foreign or unknown
 * await store.loadMessages(owned.storeId);
 */
export class SessionDirectory {
  readonly #store: SessionStore;
  readonly #clock: Clock;
  readonly #ids: IdGenerator;
  readonly #maxPerTenant: number;
  readonly #maxTotal: number;
  readonly #unownedTenant: string | undefined;
  /** Every reservation by store id. */
  readonly #entries = new Map<string, Entry>();
  /** Explicit reservations by tenant, oldest first. */
  readonly #explicit = new Map<string, Map<string, Reservation>>();
  #explicitCount = 0;

  constructor(store: SessionStore, options: SessionDirectoryOptions = {}) {
    this.#store = store;
    this.#clock = options.clock ?? systemClock;
    this.#ids = options.ids ?? randomIds;
    this.#maxPerTenant = options.maxReservationsPerTenant ?? 10_000;
    this.#maxTotal = options.maxReservations ?? 100_000;
    this.#unownedTenant = options.unownedSessionsTenant;
  }

  /**
   * The store filter for the tenant's stored sessions (list, search).
   *
   * @example
   * await store.listSessions({ ...directory.filter(tenant), limit: 50 });
   */
  filter(tenant: string): SessionFilter {
    return { owner: tenant, ...(tenant === this.#unownedTenant && { includeUnowned: true }) };
  }

  #owns(tenant: string, record: SessionRecord): boolean {
    return record.owner === undefined ? tenant === this.#unownedTenant : record.owner === tenant;
  }

  /** The tenant's session with this id, or undefined (unknown or another tenant's). */
  async find(tenant: string, id: string): Promise<OwnedSession | undefined> {
    if (!isApiSessionId(id)) return undefined;
    for (const storeId of this.#storeIds(tenant, id)) {
      const record = await this.#store.getSession(storeId);
      if (record !== undefined) {
        if (this.#owns(tenant, record)) return { kind: "stored", id, storeId, record };
        continue;
      }
      const entry = this.#entries.get(storeId);
      if (entry?.reservation.tenant === tenant) {
        return { kind: "reserved", id, storeId, reservation: entry.reservation };
      }
    }
    return undefined;
  }

  /**
   * Whether a session found before (and since waited for: a lease) is still the tenant's stored session under
   * the same store id: another server on the same database may have deleted it meanwhile, and the id may have
   * gone to another tenant's session.
   */
  async isStillStored(tenant: string, owned: OwnedSession): Promise<boolean> {
    const now = await this.find(tenant, owned.id);
    return now?.kind === "stored" && now.storeId === owned.storeId;
  }

  /** Like `find`, but a missing session is a 404. */
  async require(tenant: string, id: string): Promise<OwnedSession> {
    const owned = await this.find(tenant, id);
    if (owned === undefined) throw notFound("session", id);
    return owned;
  }

  /** The tenant's stored session; 404 when unknown, foreign, or reserved without a turn yet. */
  async requireStored(tenant: string, id: string): Promise<StoredSession> {
    const owned = await this.require(tenant, id);
    if (owned.kind === "reserved") throw new NotFoundError("session", id, "it has no stored turn yet");
    return owned;
  }

  /**
   * The session a request writes to: the tenant's own, or a new one held for the request until `release()`
   * (then forgotten unless the request stored a turn). Another tenant's session with the same id is not
   * touched: the new one gets its own store id.
   */
  async claim(tenant: string, id: string): Promise<SessionClaim> {
    checkApiSessionId(id);
    for (;;) {
      const owned = await this.find(tenant, id);
      if (owned?.kind === "stored") return { ...owned, created: false, release: () => undefined };
      if (owned === undefined) {
        const { owned: made, entry, created } = await this.#reserve(tenant, id, undefined, false);
        const release = entry === undefined ? () => undefined : this.#holder(entry);
        return { ...made, created, release };
      }
      // Held in the same tick as it is checked: a reservation that went meanwhile (its request ended) is looked
      // up again, as stored or free.
      const entry = this.#entries.get(owned.storeId);
      if (entry?.reservation.tenant === tenant) {
        entry.holders++;
        return { ...owned, created: false, release: this.#holder(entry) };
      }
    }
  }

  /** A fresh id for a tenant's new session (`ses_…`), as `create` gives one asked without an id. */
  newId(): string {
    return this.#ids("ses");
  }

  /** Creates a session for `tenant` (reserved until its first turn); 409 when the tenant already has the id. */
  async create(tenant: string, id: string | undefined, title: string | undefined): Promise<Reservation> {
    const sessionId = id ?? this.newId();
    checkApiSessionId(sessionId);
    if ((await this.find(tenant, sessionId)) !== undefined) throw conflict(sessionId);
    const { owned } = await this.#reserve(tenant, sessionId, title, true);
    if (owned.kind === "stored") throw conflict(sessionId);
    return owned.reservation;
  }

  /**
   * Forgets the reservation of a session whose first turn was stored, or that was deleted. Returns it when
   * there was one.
   */
  settle(tenant: string, storeId: string): Reservation | undefined {
    const entry = this.#entries.get(storeId);
    if (entry === undefined || entry.reservation.tenant !== tenant) return undefined;
    this.#entries.delete(storeId);
    if (entry.explicit) this.#forgetExplicit(entry.reservation);
    return entry.reservation;
  }

  /** The tenant's reservations made with `create`, newest first. */
  reservations(tenant: string): Reservation[] {
    return [...(this.#explicit.get(tenant)?.values() ?? [])].reverse();
  }

  #forgetExplicit(reservation: Reservation): void {
    const mine = this.#explicit.get(reservation.tenant);
    if (mine?.delete(reservation.storeId) !== true) return;
    this.#explicitCount--;
    if (mine.size === 0) this.#explicit.delete(reservation.tenant);
  }

  /** What lets one request go of its hold on a reservation; a request's own one is dropped by the last. */
  #holder(entry: Entry): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      entry.holders--;
      const storeId = entry.reservation.storeId;
      if (entry.holders === 0 && !entry.explicit && this.#entries.get(storeId) === entry) {
        this.#entries.delete(storeId);
      }
    };
  }

  /**
   * Where a tenant's session may be stored, the likelier first (one read for most lookups): under its plain id
   * (the unowned sessions' tenant, and sessions stored before ids were scoped) or `<tenant>/<id>`.
   */
  #storeIds(tenant: string, id: string): string[] {
    const scoped = scopedSessionId(tenant, id);
    return tenant === this.#unownedTenant ? [id, scoped] : [scoped, id];
  }

  /**
   * The store ids a tenant's new session may take, in order of preference: `<tenant>/<id>`, or for the tenant of
   * sessions without an owner (they are the CLI's: its sessions and the CLI's share ids) its plain id first.
   * Only that tenant ever takes a plain id, and never one of the store's own form (`sync:…`, see
   * tenant-sync-state-store). So a store id one tenant's deleted session leaves is not reused for another
   * tenant's — a request that checked ownership just before the delete, on another server of the same database,
   * would act on the new session — unless it is a plain id from before this rule, taken by that tenant; then the
   * owner checks of the engine and the store refuse the stale request's writes.
   */
  #newStoreIds(tenant: string, id: string): string[] {
    const scoped = scopedSessionId(tenant, id);
    return tenant === this.#unownedTenant && !isReservedStoreId(id) ? [id, scoped] : [scoped];
  }

  /**
   * Reserves a store id for the tenant's new session (see `#newStoreIds`). The entry
   * is made (and, for a request, held) before the store is asked, so two requests can never both take a free
   * id; a stored session found there is the tenant's own (returned) or another's (the next form is tried).
   */
  async #reserve(
    tenant: string,
    id: string,
    title: string | undefined,
    explicit: boolean,
  ): Promise<{ owned: OwnedSession; entry?: Entry; created: boolean }> {
    if (explicit) this.#checkRoom(tenant);
    for (const storeId of this.#newStoreIds(tenant, id)) {
      const existing = this.#entries.get(storeId);
      if (existing !== undefined) {
        if (existing.reservation.tenant !== tenant) continue;
        if (explicit) throw conflict(id);
        existing.holders++;
        const owned: OwnedSession = { kind: "reserved", id, storeId, reservation: existing.reservation };
        return { owned, entry: existing, created: false };
      }
      const reservation: Reservation = {
        id,
        storeId,
        tenant,
        createdAt: this.#clock().toISOString(),
        ...(title !== undefined && { title }),
      };
      const entry: Entry = { reservation, explicit, holders: explicit ? 0 : 1 };
      this.#entries.set(storeId, entry);
      let record: SessionRecord | undefined;
      try {
        record = await this.#store.getSession(storeId);
      } catch (error) {
        if (this.#entries.get(storeId) === entry) this.#entries.delete(storeId);
        throw error;
      }
      if (record === undefined) {
        if (explicit) this.#remember(reservation);
        return { owned: { kind: "reserved", id, storeId, reservation }, entry, created: true };
      }
      if (this.#entries.get(storeId) === entry) this.#entries.delete(storeId);
      if (this.#owns(tenant, record))
        return { owned: { kind: "stored", id, storeId, record }, created: false };
    }
    throw conflict(id); // both forms used by others: only possible with sessions imported outside the server
  }

  #checkRoom(tenant: string): void {
    const mine = this.#explicit.get(tenant)?.size ?? 0;
    if (mine >= this.#maxPerTenant || this.#explicitCount >= this.#maxTotal) {
      throw new HttpError(
        409,
        "conflict",
        `too many sessions have no turn yet (${mine} of this key's tenant); send a turn to one of them or delete some`,
      );
    }
  }

  #remember(reservation: Reservation): void {
    const mine = this.#explicit.get(reservation.tenant) ?? new Map<string, Reservation>();
    mine.set(reservation.storeId, reservation);
    this.#explicit.set(reservation.tenant, mine);
    this.#explicitCount++;
  }
}
