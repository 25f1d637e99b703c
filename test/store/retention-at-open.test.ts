// Opening a store never deletes (issue 15: every CLI command, `sessions list` and the backup command
// `sessions export --all` included, deleted sessions idle for 30 days). Retention at open is opt-in: a positive
// `retentionDays` deletes sessions idle for longer, with their blobs, and `onCleanup` reports what went.
// (Cleanup on demand is `store.cleanup(days)`, in the conformance suite, and `ctxkit sessions prune`.)
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenRetentionOptions, SessionStore, SessionStoreOptions } from "../../src/store/index.ts";
import { openPostgresSessionStore } from "../../src/store/postgres/index.ts";
import { openSqliteSessionStore } from "../../src/store/sqlite/index.ts";
import { postgresForTests, type TestPostgres } from "./pg-server.ts";

const DAY = 86_400_000;
const folder = mkdtempSync(join(tmpdir(), "ctxkit-retention-"));
let server: TestPostgres | undefined;
beforeAll(async () => {
  server = await postgresForTests();
});
afterAll(async () => {
  await server?.stop();
  rmSync(folder, { recursive: true, force: true });
});

type Opener = (options: SessionStoreOptions & OpenRetentionOptions) => Promise<SessionStore>;

const turn = (text: string) => [
  { role: "user" as const, content: [{ type: "text" as const, text }] },
  { role: "assistant" as const, content: [{ type: "text" as const, text: "ok" }] },
];

function retentionCases(name: string, location: () => Opener): void {
  describe(`${name}: retention when the store opens`, () => {
    it("deletes nothing by default; a positive retentionDays deletes idle sessions and reports them", async () => {
      const open = location();
      const at = (daysAgo: number) => () => new Date(Date.now() - daysAgo * DAY);
      const writer = await open({ clock: at(400) });
      await writer.appendTurn("idle-400-days", turn("old"));
      const blob = await writer.blobs.putText("idle-400-days", "old tool output");
      await writer.close();
      const recent = await open({ clock: at(10) });
      await recent.appendTurn("idle-10-days", turn("recent"));
      await recent.close();

      for (const options of [{}, { retentionDays: 0 }]) {
        const reports: unknown[] = [];
        const store = await open({ ...options, onCleanup: (result) => reports.push(result) });
        expect((await store.listSessions()).sessions.map((session) => session.id)).toEqual([
          "idle-10-days",
          "idle-400-days",
        ]);
        expect(await store.blobs.stat(blob)).toBeDefined();
        expect(reports).toEqual([]);
        await store.close();
      }

      const reports: unknown[] = [];
      const pruning = await open({ retentionDays: 30, onCleanup: (result) => reports.push(result) });
      expect((await pruning.listSessions()).sessions.map((session) => session.id)).toEqual(["idle-10-days"]);
      expect(await pruning.blobs.stat(blob)).toBeUndefined();
      expect(reports).toEqual([{ olderThanDays: 30, deletedSessions: 1, deletedBlobs: 1 }]);
      await pruning.close();
    });
  });
}

retentionCases("SQLite", () => {
  const path = join(folder, `${randomUUID()}.db`);
  return (options) => openSqliteSessionStore({ ...options, path });
});

retentionCases("PostgreSQL", () => {
  const schema = `retention_${randomUUID().replaceAll("-", "")}`;
  return (options) => openPostgresSessionStore({ ...options, connectionString: server!.url, schema });
});
