import { systemClock, type Clock } from "../../model/ids.ts";
import type { LimitOverrides } from "../limits/limit-overrides.ts";
import type { KeyPermission } from "./key-permissions.ts";
import {
  newKeyRecord,
  verifyAgainst,
  type ApiKeyRecord,
  type KeyIdentity,
  type KeyStore,
} from "./key-store.ts";

/**
 * Keys in process memory, for tests and embedded servers.
 *
 * @example
 * const keys = new MemoryKeyStore();
 * const { key } = await keys.create("acme");
 */
export class MemoryKeyStore implements KeyStore {
  readonly #records = new Map<string, ApiKeyRecord>();
  readonly #clock: Clock;

  constructor(options: { clock?: Clock } = {}) {
    this.#clock = options.clock ?? systemClock;
  }

  async create(
    tenant: string,
    label?: string,
    limits?: LimitOverrides,
    permissions?: readonly KeyPermission[],
  ): Promise<{ key: string; record: ApiKeyRecord }> {
    const created = newKeyRecord(tenant, this.#clock(), label, limits, permissions);
    this.#records.set(created.record.id, created.record);
    return created;
  }

  verify(key: string): Promise<KeyIdentity | undefined> {
    return verifyAgainst(key, (id) => this.#records.get(id));
  }

  async list(): Promise<ApiKeyRecord[]> {
    return [...this.#records.values()];
  }

  async revoke(id: string): Promise<boolean> {
    return this.#records.delete(id);
  }
}
