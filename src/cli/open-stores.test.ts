import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { NotFoundError, ValidationError } from "../errors/errors.ts";
import { openSqliteSessionStore } from "../store/sqlite/index.ts";
import { describePostgres } from "../store/postgres/postgres-location.ts";
import { chooseDatabase, openStores } from "./open-stores.ts";

const scratch = mkdtempSync(join(tmpdir(), "ctxkit-open-stores-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const settings = { db: "/home/u/.ctxkit/ctxkit.db", pgUrl: undefined };

describe("chooseDatabase", () => {
  it("takes --db, then --pg, then the pgUrl setting, then the db setting", () => {
    expect(chooseDatabase({}, settings)).toEqual({ kind: "sqlite", path: settings.db });
    expect(chooseDatabase({ db: "/tmp/a.db" }, { ...settings, pgUrl: "postgres://x/db" })).toEqual({
      kind: "sqlite",
      path: "/tmp/a.db",
    });
    expect(chooseDatabase({}, { ...settings, pgUrl: "postgres://x/db" })).toEqual({
      kind: "postgres",
      url: "postgres://x/db",
    });
    expect(chooseDatabase({ pg: "postgres://y/db" }, { ...settings, pgUrl: "postgres://x/db" })).toEqual({
      kind: "postgres",
      url: "postgres://y/db",
    });
    expect(chooseDatabase({}, { ...settings, pgUrl: "" })).toEqual({ kind: "sqlite", path: settings.db });
  });

  it("refuses two databases at once", () => {
    expect(() => chooseDatabase({ db: "a.db", pg: "postgres://x/db" }, settings)).toThrow(ValidationError);
  });
});

describe("openStores", () => {
  it("creates the SQLite folder, opens sessions and memories in one file, and closes both", async () => {
    const path = join(mkdtempSync(join(scratch, "store-")), "nested", "ctxkit.db");
    const stores = await openStores({ kind: "sqlite", path }, { memory: true });
    try {
      expect(stores.location).toBe(`SQLite ${path}`);
      expect(stores.memories).toBeDefined();
      expect(await stores.sessions.listSessions()).toEqual({ sessions: [] });
      expect(existsSync(path)).toBe(true);
    } finally {
      await stores.close();
    }
    const withoutMemory = await openStores({ kind: "sqlite", path }, { memory: false });
    expect(withoutMemory.memories).toBeUndefined();
    await withoutMemory.close();
  });

  it("never deletes at open; retention is an explicit opt-in that reports what it removed", async () => {
    const path = join(mkdtempSync(join(scratch, "store-")), "ctxkit.db");
    const seed = await openSqliteSessionStore({ path, clock: () => new Date(Date.now() - 90 * 86_400_000) });
    await seed.appendTurn("idle", [{ role: "user", content: [{ type: "text", text: "old" }] }]);
    await seed.close();
    const kept = await openStores({ kind: "sqlite", path }, { memory: false });
    expect((await kept.sessions.listSessions()).sessions).toHaveLength(1);
    await kept.close();
    const reports: unknown[] = [];
    const pruned = await openStores(
      { kind: "sqlite", path },
      { memory: false, retention: { retentionDays: 30, onCleanup: (result) => reports.push(result) } },
    );
    expect((await pruned.sessions.listSessions()).sessions).toEqual([]);
    expect(reports).toEqual([{ olderThanDays: 30, deletedSessions: 1, deletedBlobs: 0 }]);
    await pruned.close();
  });

  it("a read-only open refuses a SQLite file that does not exist and creates nothing", async () => {
    const path = join(scratch, "missing", "typo.db");
    const refused = await openStores({ kind: "sqlite", path }, { memory: false, readOnly: true }).catch(
      (caught: unknown) => caught,
    );
    expect(refused).toBeInstanceOf(NotFoundError);
    expect(refused).toMatchObject({ code: "not_found", kind: "database", id: path });
    expect((refused as Error).message).toMatch(/typo\.db" not found; check the path; reading never creates/);
    expect(existsSync(join(scratch, "missing"))).toBe(false);
  });

  it("never shows a PostgreSQL password", () => {
    expect(describePostgres("postgres://app:secret@db:5432/ctxkit")).toBe("postgres://app@db:5432/ctxkit");
    expect(describePostgres("not a url")).toBe("postgres");
    expect(describePostgres("postgres://app@db/ctxkit?password=secret&sslmode=require")).toBe(
      "postgres://app@db/ctxkit",
    );
  });
});
