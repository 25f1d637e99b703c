// Retention runs when a store opens: sessions idle for longer than `retentionDays` (default 30) are deleted with
// their blobs; 0 keeps everything. (Cleanup on demand is `store.cleanup(days)`, in the conformance suite, and
// `ctxkit sessions prune`.)
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionStore, SessionStoreOptions } from "../../src/store/index.ts";
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

type Opener = (options: SessionStoreOptions & { retentionDays?: number }) => Promise<SessionStore>;

const turn = (text: string) => [
  { role: "user" as const, content: [{ type: "text" as const, text }] },
  { role: "assistant" as const, content: [{ type: "text" as const, text: "ok" }] },
];

function retentionCases(name: string, location: () => Opener): void {
  describe(`${name}: retention when the store opens`, () => {
    it("deletes sessions idle for more than 30 days by default, keeps recent ones, and keeps all for 0", async () => {
      const open = location();
      const at = (daysAgo: number) => () => new Date(Date.now() - daysAgo * DAY);
      const writer = await open({ retentionDays: 0, clock: at(45) });
      await writer.appendTurn("idle-45-days", turn("old"));
      const blob = await writer.blobs.putText("idle-45-days", "old tool output");
      await writer.close();
      const recent = await open({ retentionDays: 0, clock: at(10) });
      await recent.appendTurn("idle-10-days", turn("recent"));
      await recent.close();

      const keepAll = await open({ retentionDays: 0 });
      expect((await keepAll.listSessions()).sessions.map((session) => session.id)).toEqual([
        "idle-10-days",
        "idle-45-days",
      ]);
      await keepAll.close();

      const custom = await open({ retentionDays: 60 });
      expect(await custom.getSession("idle-45-days")).toBeDefined();
      await custom.close();

      const byDefault = await open({});
      expect((await byDefault.listSessions()).sessions.map((session) => session.id)).toEqual([
        "idle-10-days",
      ]);
      expect(await byDefault.blobs.stat(blob)).toBeUndefined();

      const week = await open({ retentionDays: 7 });
      expect((await week.listSessions()).sessions).toEqual([]);
      await week.close();
      await byDefault.close();
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
