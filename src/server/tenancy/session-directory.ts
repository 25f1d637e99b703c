import { NotFoundError } from "../../errors/errors.ts";
import { systemClock, type Clock, type IdGenerator, randomIds } from "../../model/ids.ts";
import type { SessionRecord, SessionStore } from "../../store/session-store.ts";
import { HttpError, notFound } from "../http/http-error.ts";

/** A session created with `POST /v1/sessions` that has no stored turn yet. */
export interface Reservation {
  readonly id: string;
  readonly tenant: string;
  readonly createdAt: string;
  readonly title?: string;
}

/** A tenant's session: stored, or reserved until its first turn. */
export type OwnedSession =
  | { readonly kind: "stored"; readonly record: SessionRecord }
  | { readonly kind: "reserved"; readonly reservation: Reservation };

/** Most sessions without a turn one tenant may hold. */
const MAX_RESERVATIONS_PER_TENANT = 10_000;

/**
 * Who owns which session. A stored session belongs to the tenant in its `owner`; a session created over the API
 * but not yet stored (the store creates a session with its first turn) is reserved in memory. Every lookup
 * answers `undefined` — and every `require` the same 404 — for an unknown id and for another tenant's id alike.
 *
 * @example
 * const owned = await directory.require("acme", "ses_1"); // 404 HttpError when foreign or unknown
 */
export class SessionDirectory {
  readonly #store: SessionStore;
  readonly #clock: Clock;
  readonly #ids: IdGenerator;
  readonly #reserved = new Map<string, Reservation>();

  constructor(store: SessionStore, options: { clock?: Clock; ids?: IdGenerator } = {}) {
    this.#store = store;
    this.#clock = options.clock ?? systemClock;
    this.#ids = options.ids ?? randomIds;
  }

  /** The tenant's session with this id, or undefined (unknown or foreign). */
  async find(tenant: string, id: string): Promise<OwnedSession | undefined> {
    const record = await this.#store.getSession(id);
    if (record !== undefined) {
      this.#reserved.delete(id);
      return record.owner === tenant ? { kind: "stored", record } : undefined;
    }
    const reservation = this.#reserved.get(id);
    return reservation?.tenant === tenant ? { kind: "reserved", reservation } : undefined;
  }

  /** Like `find`, but a missing session is a 404. */
  async require(tenant: string, id: string): Promise<OwnedSession> {
    const owned = await this.find(tenant, id);
    if (owned === undefined) throw notFound("session", id);
    return owned;
  }

  /** The tenant's stored session; 404 when unknown, foreign, or reserved without a turn yet. */
  async requireStored(tenant: string, id: string): Promise<SessionRecord> {
    const owned = await this.require(tenant, id);
    if (owned.kind === "reserved") throw new NotFoundError("session", id, "it has no stored turn yet");
    return owned.record;
  }

  /**
   * Makes sure the tenant may write to `id`: its own session, or a new id (reserved for it from now on).
   * Another tenant's id is a 404.
   */
  async claim(tenant: string, id: string): Promise<OwnedSession> {
    const owned = await this.find(tenant, id);
    if (owned !== undefined) return owned;
    const taken = this.#reserved.get(id) ?? (await this.#store.getSession(id));
    if (taken !== undefined) throw notFound("session", id);
    return { kind: "reserved", reservation: this.#reserve(tenant, id, undefined) };
  }

  /** Creates a session for `tenant` (reserved until its first turn); 409 when the id is taken by anyone. */
  async create(tenant: string, id: string | undefined, title: string | undefined): Promise<Reservation> {
    const sessionId = id ?? this.#ids("ses");
    const taken = this.#reserved.has(sessionId) || (await this.#store.getSession(sessionId)) !== undefined;
    // Checked again after the await: another request may have reserved the id meanwhile.
    if (taken || this.#reserved.has(sessionId)) {
      throw new HttpError(
        409,
        "conflict",
        `session id "${sessionId}" is taken; choose another id or leave it out`,
      );
    }
    return this.#reserve(tenant, sessionId, title);
  }

  /** True when any tenant has a session (stored or reserved) with this id. */
  async isTaken(id: string): Promise<boolean> {
    return this.#reserved.has(id) || (await this.#store.getSession(id)) !== undefined;
  }

  /** Forgets a reservation (its session was stored, or deleted). Returns it when there was one. */
  settle(id: string): Reservation | undefined {
    const reservation = this.#reserved.get(id);
    this.#reserved.delete(id);
    return reservation;
  }

  /** The tenant's reservations, newest first. */
  reservations(tenant: string): Reservation[] {
    return [...this.#reserved.values()].filter((entry) => entry.tenant === tenant).reverse();
  }

  #reserve(tenant: string, id: string, title: string | undefined): Reservation {
    const full =
      this.#reserved.size >= MAX_RESERVATIONS_PER_TENANT &&
      this.reservations(tenant).length >= MAX_RESERVATIONS_PER_TENANT;
    if (full) {
      throw new HttpError(
        409,
        "conflict",
        `${MAX_RESERVATIONS_PER_TENANT} sessions have no turn yet; send a turn to one of them or delete some`,
      );
    }
    const reservation: Reservation = {
      id,
      tenant,
      createdAt: this.#clock().toISOString(),
      ...(title !== undefined && { title }),
    };
    this.#reserved.set(id, reservation);
    return reservation;
  }
}
