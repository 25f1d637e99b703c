import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startHarness } from "../../src/server/test-support/server-harness.test-helpers.ts";
import { openSqliteSessionStore } from "../../src/store/sqlite/index.ts";

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
      expect(await down.json()).toEqual({ status: "unavailable", reason: "the store failed" });
      expect((await harness.call("/health", { key: null })).status).toBe(200);
    } finally {
      await harness.close();
    }
  });
});
