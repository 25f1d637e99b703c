import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { CorruptStoreError, SchemaTooNewError, StoreError } from "../../errors/index.ts";
import type { MessageInput } from "../../model/message.ts";
import { openSqliteSessionStore } from "./open-sqlite-session-store.ts";
import { SQLITE_SCHEMA_VERSION } from "./sqlite-schema.ts";

const folder = mkdtempSync(join(tmpdir(), "ctxkit-sqlite-bad-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
let files = 0;
const freshPath = () => join(folder, `db-${++files}.db`);

const turn = (text: string): MessageInput[] => [
  { role: "user", content: [{ type: "text", text }] },
  { role: "assistant", content: [{ type: "text", text: `done: ${text}` }] },
];

async function storeWithData(path: string): Promise<void> {
  const store = await openSqliteSessionStore({ path, retentionDays: 0 });
  for (let index = 0; index < 40; index++)
    await store.appendTurn(`s${index % 4}`, turn(`turn ${index} ${"x".repeat(2000)}`));
  await store.close();
}

async function errorOf(action: () => Promise<unknown>): Promise<unknown> {
  try {
    await action();
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
}

describe("SQLite store: bad input gets one clear error and loses nothing", () => {
  it("opens with WAL, full synchronous commits and foreign keys", async () => {
    const store = await openSqliteSessionStore({ path: freshPath(), retentionDays: 0 });
    const pragma = (name: string) =>
      Object.values(store.database.connection.prepare(`PRAGMA ${name}`).get()!)[0];
    expect(pragma("journal_mode")).toBe("wal");
    expect(pragma("synchronous")).toBe(2);
    expect(pragma("foreign_keys")).toBe(1);
    expect(pragma("user_version")).toBe(SQLITE_SCHEMA_VERSION);
    await store.close();
  });

  it("refuses a file that is not a database, and leaves it as it was", async () => {
    const path = freshPath();
    writeFileSync(path, "these are my notes, not a database\n".repeat(200));
    const before = readFileSync(path);
    const error = await errorOf(() => openSqliteSessionStore({ path }));
    expect(error).toBeInstanceOf(CorruptStoreError);
    expect((error as Error).message).toContain("not a database");
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it("refuses a damaged database with CorruptStoreError and does not change it", async () => {
    const path = freshPath();
    await storeWithData(path);
    const bytes = readFileSync(path);
    for (let offset = 4096; offset < bytes.length; offset += 97) bytes[offset] = (bytes[offset]! + 91) % 256;
    writeFileSync(path, bytes);
    const error = await errorOf(async () => {
      const store = await openSqliteSessionStore({ path, retentionDays: 0 });
      try {
        for (let index = 0; index < 4; index++) await store.loadMessages(`s${index}`);
        await store.listSessions();
      } finally {
        await store.close();
      }
    });
    expect(error).toBeInstanceOf(CorruptStoreError);
    expect((error as Error).message).toMatch(/damaged|not a database/);
    expect(readFileSync(path).equals(bytes)).toBe(true);
  });

  it("refuses a database written by a newer ctxkit and a foreign SQLite database", async () => {
    const path = freshPath();
    await storeWithData(path);
    const raw = new DatabaseSync(path);
    raw.exec("PRAGMA user_version = 99");
    raw.close();
    const error = await errorOf(() => openSqliteSessionStore({ path }));
    expect(error).toBeInstanceOf(SchemaTooNewError);
    expect((error as Error).message).toMatch(
      new RegExp(`schema version 99 .* supports up to ${SQLITE_SCHEMA_VERSION}; upgrade ctxkit`),
    );

    const foreign = freshPath();
    const other = new DatabaseSync(foreign);
    other.exec(
      "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL); INSERT INTO invoices VALUES (1, 9.5)",
    );
    other.close();
    expect(await errorOf(() => openSqliteSessionStore({ path: foreign }))).toBeInstanceOf(CorruptStoreError);
    const check = new DatabaseSync(foreign);
    expect(check.prepare("SELECT total FROM invoices").get()).toEqual({ total: 9.5 });
    check.close();
  });

  it("reports a full disk as a retryable StoreError and keeps every acknowledged turn", async () => {
    const path = freshPath();
    const setup = await openSqliteSessionStore({ path, retentionDays: 0 });
    await setup.appendTurn("s1", turn("first"));
    const pages = (setup.database.connection.prepare("PRAGMA page_count").get() as
      { page_count: number } | undefined)!.page_count;
    await setup.close();
    const store = await openSqliteSessionStore({
      path,
      retentionDays: 0,
      pragmas: { max_page_count: pages + 30 },
    });
    const acknowledged: string[] = ["first"];
    let failure: unknown;
    for (let index = 0; index < 200 && failure === undefined; index++) {
      try {
        await store.appendTurn("s1", turn(`big ${index} ${"y".repeat(20_000)}`));
        acknowledged.push(`big ${index}`);
      } catch (error) {
        failure = error;
      }
    }
    expect(failure).toBeInstanceOf(StoreError);
    expect((failure as StoreError).retryable).toBe(true);
    expect((failure as Error).message).toContain("full");
    const messages = await store.loadMessages("s1");
    expect(messages).toHaveLength(acknowledged.length * 2);
    expect((await store.getSession("s1"))?.nextSeq).toBe(acknowledged.length * 2);
    expect(
      store.database.connection.prepare("PRAGMA integrity_check").get() as
        { integrity_check: string } | undefined,
    ).toEqual({
      integrity_check: "ok",
    });
    await store.close();
  });

  it("reports a read-only folder as a FileAccessError and leaves the database readable", async () => {
    const readOnly = join(folder, "read-only");
    mkdirSync(readOnly);
    const existing = join(readOnly, "existing.db");
    await storeWithData(existing);
    chmodSync(existing, 0o444);
    chmodSync(readOnly, 0o555);
    const worker = fileURLToPath(
      new URL("../../../test/store/workers/open-sqlite-store.ts", import.meta.url),
    );
    // root ignores permissions, so the attempt runs as `nobody` when the test runs as root
    const asUser = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    const attempt = (path: string) =>
      JSON.parse(
        execFileSync(process.execPath, [worker, path, "append"], { ...asUser, encoding: "utf8" }),
      ) as {
        error?: { name: string; code: string; message: string };
      };
    const created = attempt(join(readOnly, "new", "ctxkit.db"));
    expect(created.error).toMatchObject({ name: "FileAccessError", code: "file_access" });
    expect(created.error?.message).toMatch(/writable|read-only|permission/);
    const opened = attempt(existing);
    expect(opened.error).toMatchObject({ code: "file_access" });
    expect(opened.error?.message).toMatch(/writable|read-only|permission|cannot open/);
    chmodSync(readOnly, 0o755);
    const store = await openSqliteSessionStore({ path: existing, retentionDays: 0 });
    expect((await store.loadMessages("s0")).length).toBe(20);
    await store.close();
  });

  it("upgrades a version-1 database (sessions written before governor states were stored) and loses nothing", async () => {
    const path = freshPath();
    await storeWithData(path);
    const raw = new DatabaseSync(path);
    raw.exec(
      "DROP TABLE governor_states; DROP TABLE memories; DROP TABLE memory_words; DROP TABLE memory_versions; PRAGMA user_version = 1",
    );
    raw.close();
    const store = await openSqliteSessionStore({ path, retentionDays: 0 });
    expect((await store.loadMessages("s1")).length).toBe(20);
    expect(await store.loadGovernorState("s1")).toBeUndefined();
    await store.appendTurn("s1", turn("after the upgrade"), { governorState: { version: 1 } });
    expect(await store.loadGovernorState("s1")).toEqual({ version: 1 });
    await store.close();
    const check = new DatabaseSync(path);
    expect(check.prepare("PRAGMA user_version").get()).toEqual({ user_version: SQLITE_SCHEMA_VERSION });
    check.close();
  });
});
