import { randomUUID } from "node:crypto";
import { CtxkitError } from "../../errors/ctxkit-error.ts";
import type { SessionStore } from "../../store/session-store.ts";
import { READY_PROBE_ID_PREFIX } from "../tenancy/tenant-session-id.ts";

/** What `StoreWriteProbe.check` found. */
export type WriteCheck = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** The owner of probe sessions: not a tenant name (tenants have no `:`), so no tenant ever lists one. */
const PROBE_OWNER = "ctxkit:ready";

/**
 * Whether the store can write now, found by writing: a one-message session stored and deleted (under a store id
 * no API session takes, owned by no tenant) — a read alone still answers while the disk is full or the file is
 * damaged. Checks asked for while one runs share it. A probe session whose delete failed is deleted by a later
 * check.
 *
 * @example
 * const probe = new StoreWriteProbe(store);
 * const { ok } = await probe.check();
 */
export class StoreWriteProbe {
  readonly #store: SessionStore;
  #running: Promise<WriteCheck> | undefined;
  readonly #leftovers = new Set<string>();

  constructor(store: SessionStore) {
    this.#store = store;
  }

  /** Writes and deletes a probe session (or joins the check running now). */
  check(): Promise<WriteCheck> {
    this.#running ??= this.#probe().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #probe(): Promise<WriteCheck> {
    const id = `${READY_PROBE_ID_PREFIX}${randomUUID()}`;
    this.#leftovers.add(id);
    try {
      await this.#store.appendTurn(id, [{ role: "user", content: [{ type: "text", text: "ready probe" }] }], {
        session: { owner: PROBE_OWNER, agent: "ctxkit-ready" },
      });
      for (const leftover of this.#leftovers) {
        await this.#store.deleteSession(leftover);
        this.#leftovers.delete(leftover);
      }
      return { ok: true };
    } catch (error) {
      const code = CtxkitError.isInstance(error) ? error.code : "error";
      return { ok: false, reason: `the store cannot write (${code})` };
    }
  }
}
