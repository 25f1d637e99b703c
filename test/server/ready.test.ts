import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startHarness } from "../../src/server/test-support/server-harness.test-helpers.ts";
import { StoreError } from "../../src/errors/errors.ts";
import { MemorySessionStore } from "../../src/store/memory/index.ts";
import type { AppendResult } from "../../src/store/session-store.ts";
import { openSqliteSessionStore } from "../../src/store/sqlite/index.ts";

/** A store whose writes fail as a full disk's do while `full`, its reads unaffected. */
class DiskFullStore extends MemorySessionStore {
  full = false;
  override appendTurn(...args: Parameters<MemorySessionStore["appendTurn"]>): Promise<AppendResult> {
    if (this.full) return Promise.reject(new StoreError("SQLITE_FULL: database or disk is full"));
    return super.appendTurn(...args);
  }
}

const directory = mkdtempSync(join(tmpdir(), "ctxkit-ready-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe("GET /ready", () => {
  it("answers 200 while the store answers and 503 once it cannot, without a key; /health stays 200", async () => {
    const store = await openSqliteSessionStore({ path: join(directory, "ready.db") });
    const harness = await startHarness({ store });
    try {
      const ready = await harness.call("/ready", { key: null });
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: "ready" });
      await store.close();
      const down = await harness.call("/ready", { key: null });
      expect(down.status).toBe(503);
      expect(await down.json()).toEqual({
        status: "unavailable",
        reason: "the store cannot write (store_error)",
      });
      expect((await harness.call("/health", { key: null })).status).toBe(200);
    } finally {
      await harness.close();
    }
  });

  it("answers 503 while the store reads but cannot write (a full disk), 200 again once it can, and leaves no probe", async () => {
    const store = new DiskFullStore();
    const harness = await startHarness({ store });
    try {
      store.full = true;
      const full = await harness.call("/ready", { key: null });
      expect(full.status).toBe(503);
      expect(await full.json()).toEqual({
        status: "unavailable",
        reason: "the store cannot write (store_error)",
      });
      // Reads still work: a read probe would have said ready.
      expect((await harness.call("/v1/sessions")).status).toBe(200);
      store.full = false;
      expect((await harness.call("/ready", { key: null })).status).toBe(200);
      const all = await store.listSessions({ limit: 1000 });
      expect(all.sessions).toEqual([]);
    } finally {
      await harness.close();
    }
  });
});
