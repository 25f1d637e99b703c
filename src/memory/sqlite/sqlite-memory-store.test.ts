import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { CtxkitError } from "../../errors/index.ts";
import { openSqliteSessionStore } from "../../store/sqlite/open-sqlite-session-store.ts";
import { describeMemoryStoreConformance } from "../memory-store-conformance.test-helpers.ts";
import { openSqliteMemoryStore } from "./open-sqlite-memory-store.ts";
import { SQLITE_SCHEMA_VERSION } from "../../store/sqlite/sqlite-schema.ts";

const folder = mkdtempSync(join(tmpdir(), "ctxkit-memory-sqlite-"));
let files = 0;
const nextPath = () => join(folder, `memory-${++files}.db`);
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describeMemoryStoreConformance("sqlite", {
  create: (options) => openSqliteMemoryStore({ ...options, path: nextPath() }),
});

async function failure(promise: Promise<unknown>): Promise<CtxkitError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!CtxkitError.isInstance(error)) throw new Error(`expected a ctxkit error, got ${String(error)}`);
  return error;
}

describe("SQLite memory store", () => {
  it("shares one file with the session store, whichever opens it first", async () => {
    for (const memoryFirst of [true, false]) {
      const path = nextPath();
      const first = memoryFirst
        ? await openSqliteMemoryStore({ path })
        : await openSqliteSessionStore({ path });
      await first.close();
      const sessions = await openSqliteSessionStore({ path, retentionDays: 0 });
      const memories = await openSqliteMemoryStore({ path });
      await sessions.appendTurn("s1", [{ role: "user", content: [{ type: "text", text: "hello there" }] }]);
      await memories.add({ kind: "fact", content: "the user said hello", sourceSessionId: "s1" });
      await sessions.close();
      await memories.close();
      const reopenedSessions = await openSqliteSessionStore({ path, retentionDays: 0 });
      const reopenedMemories = await openSqliteMemoryStore({ path });
      expect((await reopenedSessions.loadMessages("s1")).length).toBe(1);
      expect((await reopenedMemories.search("hello")).map((hit) => hit.memory.sourceSessionId)).toEqual([
        "s1",
      ]);
      await reopenedSessions.close();
      await reopenedMemories.close();
    }
  });

  it("runs in WAL mode and records the one schema version of the file", async () => {
    const path = nextPath();
    await (await openSqliteMemoryStore({ path })).close();
    const raw = new DatabaseSync(path);
    expect(raw.prepare("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    expect(raw.prepare("PRAGMA user_version").get()).toEqual({ user_version: SQLITE_SCHEMA_VERSION });
    expect(raw.prepare("SELECT name FROM sqlite_schema WHERE name = 'memory_schema'").get()).toBeUndefined();
    raw.close();
  });

  it("sees writes of another connection through the version counter", async () => {
    const path = nextPath();
    const writer = await openSqliteMemoryStore({ path });
    const reader = await openSqliteMemoryStore({ path });
    const before = await reader.version();
    await writer.add({ kind: "note", content: "written elsewhere" });
    expect(await reader.version()).toBeGreaterThan(before);
    expect((await reader.list()).map((memory) => memory.content)).toEqual(["written elsewhere"]);
    await writer.close();
    await reader.close();
  });

  it("refuses memory tables written by a newer ctxkit and leaves the file unchanged", async () => {
    const path = nextPath();
    await (await openSqliteMemoryStore({ path })).close();
    const raw = new DatabaseSync(path);
    raw.exec(`PRAGMA user_version = ${SQLITE_SCHEMA_VERSION + 1}`);
    raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    raw.close();
    const bytes = readFileSync(path);
    const error = await failure(openSqliteMemoryStore({ path }));
    expect(error.code).toBe("schema_too_new");
    expect(error.message).toContain("upgrade ctxkit");
    expect(readFileSync(path).equals(bytes)).toBe(true);
  });

  it("refuses a file that is not a ctxkit database", async () => {
    const foreign = nextPath();
    const raw = new DatabaseSync(foreign);
    raw.exec("CREATE TABLE invoices (id INTEGER)");
    raw.close();
    expect((await failure(openSqliteMemoryStore({ path: foreign }))).code).toBe("corrupt_store");
    const garbage = nextPath();
    writeFileSync(garbage, "this is not a database at all, just text ".repeat(200));
    expect((await failure(openSqliteMemoryStore({ path: garbage }))).code).toBe("corrupt_store");
  });

  it("reports a closed store with a typed error", async () => {
    const store = await openSqliteMemoryStore({ path: nextPath() });
    await store.close();
    const error = await failure(store.list());
    expect(error.code).toBe("store_error");
  });
});
