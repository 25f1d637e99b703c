// A damaged SQLite database (issue 15): nothing is written into it, an export of it leaves no partial file,
// and a message whose stored JSON is damaged is named (session and seq) in one line, exit 2. The files are
// damaged for real, by overwriting bytes of a b-tree page or of a message body.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { Writable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { transcriptPath } from "../../../test/support/transcripts.ts";
import { CorruptStoreError, DamagedMessageError } from "../../errors/index.ts";
import { openSqliteSessionStore } from "../../store/sqlite/index.ts";
import { runCli } from "../main.ts";

const home = mkdtempSync(join(tmpdir(), "ctxkit-damaged-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));
let counter = 0;
const fresh = (name: string) => join(home, `${++counter}-${name}`);
const short = transcriptPath("claude-code__marot-spotter/short.jsonl");
const spotter = transcriptPath("claude-code__marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl");

function capture() {
  let text = "";
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

async function run(argv: string[]) {
  const stdout = capture();
  const stderr = capture();
  const code = await runCli(argv, { stdout: stdout.stream, stderr: stderr.stream, env: { HOME: home } });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** Overwrites the type byte of the root page of the `messages` table: quick_check reports the b-tree. */
function damageMessagesPage(path: string): void {
  const database = new DatabaseSync(path, { readOnly: true });
  const { page_size: pageSize } = database.prepare("PRAGMA page_size").get() as { page_size: number };
  const { rootpage } = database
    .prepare("SELECT rootpage FROM sqlite_schema WHERE name = 'messages'")
    .get() as { rootpage: number };
  database.close();
  const bytes = readFileSync(path);
  bytes[(rootpage - 1) * pageSize] = 0xff;
  writeFileSync(path, bytes);
}

describe("a database with a damaged page", () => {
  it("refuses an import without writing anything, and an export leaves no file", async () => {
    const folder = fresh("page");
    mkdirSync(folder);
    const db = join(folder, "ctxkit.db");
    expect((await run(["import", spotter, "--db", db])).code).toBe(0);
    damageMessagesPage(db);
    const before = readFileSync(db);

    const imported = await run(["import", short, "--db", db]);
    expect(imported.stderr).toMatch(
      /^ctxkit: .*ctxkit\.db: the database is damaged .*nothing was written[^\n]*\n$/,
    );
    expect(imported.code).toBe(2);
    expect(readFileSync(db).equals(before)).toBe(true);

    const backup = join(folder, "backup.jsonl");
    const exported = await run(["sessions", "export", "--all", "-o", backup, "--db", db]);
    expect(exported.stderr).toMatch(/^ctxkit: .*ctxkit\.db: .*damaged[^\n]*\n$/);
    expect(exported.code).toBe(2);
    expect(readdirSync(folder).filter((name) => !name.startsWith("ctxkit.db"))).toEqual([]);

    const store = await openSqliteSessionStore({ path: db });
    await expect(
      store.appendTurn("new", [{ role: "user", content: [{ type: "text", text: "hi" }] }]),
    ).rejects.toBeInstanceOf(CorruptStoreError);
    await store.close();
    expect(readFileSync(db).equals(before)).toBe(true);
  });
});

describe("a message whose stored JSON is damaged", () => {
  it("is named with its session and seq, in one line, exit 2; the other sessions stay readable", async () => {
    const folder = fresh("body");
    mkdirSync(folder);
    const db = join(folder, "ctxkit.db");
    const store = await openSqliteSessionStore({ path: db });
    await store.appendTurn("healthy", [{ role: "user", content: [{ type: "text", text: "fine" }] }]);
    await store.appendTurn("hurt", [
      { role: "user", content: [{ type: "text", text: "first" }] },
      { role: "assistant", content: [{ type: "text", text: "MARKER-7431 of the damaged body" }] },
    ]);
    await store.close();
    const bytes = readFileSync(db);
    const at = bytes.indexOf('"MARKER-7431');
    expect(at).toBeGreaterThan(0);
    bytes[at] = "}".charCodeAt(0);
    writeFileSync(db, bytes);

    const shown = await run(["sessions", "show", "hurt", "--db", db]);
    expect(shown.stderr).toMatch(
      /^ctxkit: .*ctxkit\.db: message seq 1 of session "hurt" is damaged .*ctxkit sessions delete hurt[^\n]*\n$/,
    );
    expect(shown.code).toBe(2);
    const backup = join(folder, "all.jsonl");
    const exported = await run(["sessions", "export", "--all", "-o", backup, "--db", db]);
    expect(exported.stderr).toMatch(/message seq 1 of session "hurt" is damaged/);
    expect(exported.code).toBe(2);
    expect(readdirSync(folder).filter((name) => !name.startsWith("ctxkit.db"))).toEqual([]);
    expect((await run(["sessions", "export", "healthy", "-o", backup, "--db", db])).code).toBe(0);

    const reader = await openSqliteSessionStore({ path: db, readOnly: true });
    const error = await reader.loadMessages("hurt").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DamagedMessageError);
    expect(error).toMatchObject({ code: "corrupt_store", sessionId: "hurt", seq: 1 });
    await reader.close();
  });
});
