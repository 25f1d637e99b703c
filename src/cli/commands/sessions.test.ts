import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresForTests, type TestPostgres } from "../../../test/store/pg-server.ts";
import { transcriptPath } from "../../../test/support/transcripts.ts";
import { importTranscriptFile } from "../../formats/transcripts/import-transcript.ts";
import type { SessionRecord } from "../../store/session-store.ts";
import { openSqliteSessionStore } from "../../store/sqlite/index.ts";
import { runCli } from "../main.ts";

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

const home = mkdtempSync(join(tmpdir(), "ctxkit-sessions-cli-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

async function run(argv: string[], env: Record<string, string> = {}) {
  const stdout = capture();
  const stderr = capture();
  const code = await runCli(argv, {
    stdout: stdout.stream,
    stderr: stderr.stream,
    env: { HOME: home, ...env },
  });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

async function json<T>(argv: string[], env: Record<string, string> = {}): Promise<T> {
  const result = await run([...argv, "--json"], env);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as T;
}

let databases = 0;
const freshDb = () => join(home, `db-${++databases}.db`);
const spotter = transcriptPath("claude-code__marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl");
const short = transcriptPath("claude-code__marot-spotter/short.jsonl");
const SHORT_ID = "55604662-cf2a-4331-851a-ec234028f8ca";
const DAY = 86_400_000;

/** A database holding the two Claude Code transcripts of the corpus used here. */
async function importedDb(): Promise<string> {
  const db = freshDb();
  for (const file of [short, spotter]) expect((await run(["import", file, "--db", db])).code).toBe(0);
  return db;
}

describe("ctxkit sessions: where the sessions are", () => {
  it("uses ~/.ctxkit/ctxkit.db by default; CTXKIT_DB and --db override it", async () => {
    const user = mkdtempSync(join(home, "user-"));
    expect((await run(["import", short], { HOME: user })).code).toBe(0);
    expect(existsSync(join(user, ".ctxkit", "ctxkit.db"))).toBe(true);
    const listed = await json<{ sessions: SessionRecord[] }>(["sessions", "list"], { HOME: user });
    expect(listed.sessions.map((session) => session.id)).toEqual([SHORT_ID]);

    const viaEnv = join(user, "env.db");
    expect((await run(["import", spotter], { HOME: user, CTXKIT_DB: viaEnv })).code).toBe(0);
    const viaFlag = join(user, "flag.db");
    expect((await run(["import", short, "--db", viaFlag], { HOME: user, CTXKIT_DB: viaEnv })).code).toBe(0);
    const ids = async (argv: string[], env: Record<string, string>) =>
      (await json<{ sessions: SessionRecord[] }>(["sessions", "list", ...argv], env)).sessions.map(
        (session) => session.id,
      );
    expect(await ids([], { HOME: user, CTXKIT_DB: viaEnv })).not.toContain(SHORT_ID);
    expect(await ids(["--db", viaFlag], { HOME: user, CTXKIT_DB: viaEnv })).toEqual([SHORT_ID]);
  });

  it("a read command refuses a database that does not exist and creates nothing; a write creates it", async () => {
    const user = mkdtempSync(join(home, "user-"));
    const typo = join(user, "no-such-folder", "typo.db");
    const outFile = join(user, "out.jsonl");
    for (const argv of [
      ["list"],
      ["list", "--json"],
      ["show", SHORT_ID],
      ["search", "server"],
      ["export", "--all"],
      ["export", SHORT_ID, "-o", outFile],
    ]) {
      const result = await run(["sessions", ...argv, "--db", typo], { HOME: user });
      expect(result.code, argv.join(" ")).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toBe(
        `ctxkit: database "${typo}" not found; check the --db path (the default database is ` +
          `${join(user, ".ctxkit", "ctxkit.db")}); reading never creates a database, storing a session ` +
          "(ctxkit import, ctxkit chat) does\n",
      );
    }
    const viaEnv = await run(["sessions", "list"], { HOME: user, CTXKIT_DB: typo });
    expect(viaEnv.code).toBe(2);
    expect(viaEnv.stderr).toMatch(
      /^ctxkit: database ".*typo\.db" not found; check CTXKIT_DB \(the default database is /,
    );
    expect(existsSync(join(user, "no-such-folder"))).toBe(false);
    expect(existsSync(outFile)).toBe(false);

    expect((await run(["import", short, "--db", typo], { HOME: user })).code).toBe(0);
    expect(
      await json<{ sessions: SessionRecord[] }>(["sessions", "list", "--db", typo], { HOME: user }),
    ).toMatchObject({ sessions: [{ id: SHORT_ID }] });
  });

  it("on a machine with no database yet, lists no sessions without creating one", async () => {
    const user = mkdtempSync(join(home, "user-"));
    const listed = await run(["sessions", "list"], { HOME: user });
    expect(listed).toEqual({ code: 0, stdout: "no sessions\n", stderr: "" });
    expect(await json<{ sessions: SessionRecord[] }>(["sessions", "list"], { HOME: user })).toEqual({
      sessions: [],
    });
    const shown = await run(["sessions", "show", SHORT_ID], { HOME: user });
    expect(shown.code).toBe(2);
    expect(shown.stderr).toBe(
      `ctxkit: session "${SHORT_ID}" not found; list them with \`ctxkit sessions list\`\n`,
    );
    expect(existsSync(join(user, ".ctxkit"))).toBe(false);
  });
});

describe("ctxkit sessions on SQLite", () => {
  it("lists sessions newest first, pages, and filters", async () => {
    const db = await importedDb();
    const all = await json<{ sessions: SessionRecord[] }>(["sessions", "list", "--db", db]);
    expect(all.sessions.map((session) => session.id).sort()).toEqual(
      [SHORT_ID, ...(await importTranscriptFile(spotter)).map((conversation) => conversation.id)].sort(),
    );
    const updated = all.sessions.map((session) => session.updatedAt);
    expect(updated).toEqual([...updated].sort().reverse());
    const first = await json<{ sessions: SessionRecord[]; nextCursor?: string }>([
      "sessions",
      "list",
      "--db",
      db,
      "--limit",
      "1",
    ]);
    expect(first.sessions).toHaveLength(1);
    const second = await json<{ sessions: SessionRecord[] }>([
      "sessions",
      "list",
      "--db",
      db,
      "--limit",
      "1",
      "--cursor",
      first.nextCursor!,
    ]);
    expect(second.sessions[0]!.id).not.toBe(first.sessions[0]!.id);
    expect(
      (await json<{ sessions: unknown[] }>(["sessions", "list", "--db", db, "--owner", "nobody"])).sessions,
    ).toEqual([]);

    const table = await run(["sessions", "list", "--db", db]);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^id +title +messages +turns +updated +cost$/);
    expect(lines).toHaveLength(2 + all.sessions.length);
    expect(table.stdout).toContain("mix phx.server doesnt seem to start");
  });

  it("shows a session's figures and every message", async () => {
    const db = await importedDb();
    const [conversation] = await importTranscriptFile(short);
    const shown = await json<{ session: SessionRecord; messages: unknown[] }>([
      "sessions",
      "show",
      SHORT_ID,
      "--db",
      db,
    ]);
    expect(shown.session).toMatchObject({
      id: SHORT_ID,
      messageCount: 5,
      turnCount: 2,
      title: "mix phx.server doesnt seem to start",
    });
    expect(shown.messages).toEqual(JSON.parse(JSON.stringify(conversation!.messages)));
    const text = await run(["sessions", "show", SHORT_ID, "--db", db]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^session +55604662-cf2a-4331-851a-ec234028f8ca$/m);
    expect(text.stdout).toMatch(/^messages +5 stored, 2 turns, next seq 5$/m);
    // Token counts as people read them: thousands separated.
    const input = /^tokens +input ([\d,]+), output [\d,]+, cache read [\d,]+/m.exec(text.stdout)?.[1];
    expect(input).toBe(shown.session.usage.input.toLocaleString("en-US"));
    expect(shown.session.usage.input).toBeGreaterThan(999);
    expect(text.stdout).toMatch(/^ +0 +1 +user +mix phx\.server doesnt seem to start$/m);
    expect(text.stdout).toMatch(/^ +2 +1 +tool +← Bash: /m);
  });

  it("searches titles and messages", async () => {
    const db = await importedDb();
    const { hits } = await json<{ hits: { session: SessionRecord; seq?: number; snippet: string }[] }>([
      "sessions",
      "search",
      "phx.server",
      "--db",
      db,
    ]);
    expect(hits.map((hit) => hit.session.id)).toContain(SHORT_ID);
    expect(
      (await json<{ hits: unknown[] }>(["sessions", "search", "zzzyxwvnotthere", "--db", db])).hits,
    ).toEqual([]);
    expect((await run(["sessions", "search", "zzzyxwvnotthere", "--db", db])).stdout).toBe("no matches\n");
  });

  it("exports to stdout or a file and imports it elsewhere, byte for byte", async () => {
    const db = await importedDb();
    const file = join(home, `export-${randomUUID()}.jsonl`);
    const written = await json<{ file: string; sessions: string[] }>([
      "sessions",
      "export",
      "--all",
      "-o",
      file,
      "--db",
      db,
    ]);
    expect(written.sessions).toHaveLength(2);
    const exported = readFileSync(file, "utf8");
    const toStdout = await run(["sessions", "export", ...written.sessions, "--db", db]);
    expect(toStdout.stdout).toBe(exported);

    const other = freshDb();
    const imported = await json<{ sessions: { id: string; messages: number }[] }>([
      "sessions",
      "import",
      file,
      "--db",
      other,
    ]);
    expect(imported.sessions.map((session) => session.id)).toEqual(written.sessions);
    expect((await run(["sessions", "export", "--all", "--db", other])).stdout).toBe(exported);

    const again = await run(["sessions", "import", file, "--db", other]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(
      /^ctxkit: session .+ already exists; nothing was imported; pass --replace to overwrite existing sessions or --skip-existing to import only the new ones\n$/,
    );
    expect((await run(["sessions", "import", file, "--db", other, "--replace"])).code).toBe(0);

    const existing = await run(["sessions", "export", "--all", "-o", file, "--db", db]);
    expect(existing.code).toBe(2);
    expect(existing.stderr).toBe(`ctxkit: ${file}: already exists; choose another file or remove it\n`);
    expect(readFileSync(file, "utf8")).toBe(exported);
    // A reader that goes away (`| head`) ends the export quietly.
    let received = 0;
    const closing = new Writable({
      highWaterMark: 1024,
      write(chunk: Buffer, _encoding, done) {
        received += chunk.length;
        if (received > 2000) done(Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
        else done();
      },
    });
    const stderr = capture();
    const piped = await runCli(["sessions", "export", "--all", "--db", db], {
      stdout: closing,
      stderr: stderr.stream,
      env: { HOME: home },
    });
    expect({ code: piped, stderr: stderr.text() }).toEqual({ code: 0, stderr: "" });
    expect(received).toBeLessThan(exported.length);

    const nothing = await run(["sessions", "export", "--db", db]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toBe("ctxkit: name the sessions to export, or pass --all\n");
  });

  it("forks, renames and deletes sessions", async () => {
    const db = await importedDb();
    const { session: fork } = await json<{ session: SessionRecord }>([
      "sessions",
      "fork",
      SHORT_ID,
      "--at",
      "2",
      "--as",
      "my-fork",
      "--db",
      db,
    ]);
    expect(fork).toMatchObject({ id: "my-fork", parentId: SHORT_ID, forkSeq: 2, messageCount: 3 });
    const latest = await json<{ session: SessionRecord }>(["sessions", "fork", SHORT_ID, "--db", db]);
    expect(latest.session.messageCount).toBe(5);

    const renamed = await json<{ session: SessionRecord }>([
      "sessions",
      "rename",
      "my-fork",
      "Phoenix, again",
      "--db",
      db,
    ]);
    expect(renamed.session.title).toBe("Phoenix, again");
    const long = await json<{ session: SessionRecord }>([
      "sessions",
      "rename",
      "my-fork",
      "x".repeat(150),
      "--db",
      db,
    ]);
    expect(long.session.title).toHaveLength(100);
    const blank = await run(["sessions", "rename", "my-fork", "   ", "--db", db]);
    expect(blank.code).toBe(2);
    expect(blank.stderr).toBe("ctxkit: a title needs at least one visible character\n");

    const deleted = await json<{ deleted: string[] }>([
      "sessions",
      "delete",
      "my-fork",
      latest.session.id,
      "--db",
      db,
    ]);
    expect(deleted.deleted).toEqual(["my-fork", latest.session.id]);
    const store = await openSqliteSessionStore({ path: db, retentionDays: 0 });
    expect(await store.getSession("my-fork")).toBeUndefined();
    expect(await store.getSession(SHORT_ID)).toBeDefined();
    await store.close();
  });

  it("prunes idle sessions on demand only", async () => {
    const db = freshDb();
    const old = await openSqliteSessionStore({ path: db, clock: () => new Date(Date.now() - 40 * DAY) });
    await old.appendTurn("idle-40", [{ role: "user", content: [{ type: "text", text: "old" }] }]);
    await old.close();
    const recent = await openSqliteSessionStore({ path: db, clock: () => new Date(Date.now() - 10 * DAY) });
    await recent.appendTurn("idle-10", [{ role: "user", content: [{ type: "text", text: "newer" }] }]);
    await recent.close();

    const keep = { CTXKIT_SESSION_RETENTION_DAYS: "0" };
    const none = await run(["sessions", "prune", "--db", db], keep);
    expect(none.stdout).toBe("retention is 0 days (keep forever): nothing deleted; pass --days N to prune\n");

    const pruned = await json<{ days: number; deletedSessions: number }>(["sessions", "prune", "--db", db]);
    expect(pruned).toEqual({ days: 30, deletedSessions: 1, deletedBlobs: 0 });
    const text = await run(["sessions", "prune", "--days", "5", "--db", db]);
    expect(text.stdout).toBe("deleted 1 session idle for more than 5 days and 0 unused blobs\n");
  });

  it("never deletes a session when a command opens the database (issue 15: list and export --all did)", async () => {
    const db = freshDb();
    const seed = await openSqliteSessionStore({ path: db, clock: () => new Date(Date.now() - 400 * DAY) });
    await seed.appendTurn("idle-400", [{ role: "user", content: [{ type: "text", text: "old" }] }]);
    await seed.close();
    const ids = async () =>
      (await json<{ sessions: SessionRecord[] }>(["sessions", "list", "--db", db])).sessions.map(
        (session) => session.id,
      );
    expect(await ids()).toEqual(["idle-400"]);
    const backup = join(home, `backup-${randomUUID()}.jsonl`);
    expect((await run(["sessions", "export", "--all", "-o", backup, "--db", db])).code).toBe(0);
    expect(readFileSync(backup, "utf8")).toContain('"id":"idle-400"');
    expect((await run(["sessions", "show", "idle-400", "--db", db])).code).toBe(0);
    expect((await run(["import", short, "--db", db])).code).toBe(0);
    expect(await ids()).toEqual([SHORT_ID, "idle-400"]);
  });
});

describe("ctxkit sessions errors: one line, non-zero exit", () => {
  it("names an unknown session and changes nothing", async () => {
    const db = await importedDb();
    for (const argv of [
      ["show", "nope"],
      ["rename", "nope", "title"],
      ["fork", "nope"],
      ["export", "nope"],
      ["delete", SHORT_ID, "nope"],
    ]) {
      const result = await run(["sessions", ...argv, "--db", db]);
      expect(result.code, argv.join(" ")).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toBe('ctxkit: session "nope" not found; list them with `ctxkit sessions list`\n');
    }
    const store = await openSqliteSessionStore({ path: db, retentionDays: 0 });
    expect(await store.getSession(SHORT_ID)).toBeDefined();
    await store.close();
  });

  it("refuses a file that is not a database without touching it", async () => {
    const path = join(home, "not-a-db.db");
    writeFileSync(path, "these are notes, not a database\n".repeat(200));
    const result = await run(["sessions", "list", "--db", path]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^ctxkit: .*not-a-db\.db: the file is not a database .*\n$/);
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(readFileSync(path, "utf8")).toBe("these are notes, not a database\n".repeat(200));
  });

  it("refuses bad options", async () => {
    const both = await run(["sessions", "list", "--db", freshDb(), "--pg", "postgres://127.0.0.1:1/x"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toBe("ctxkit: --db and --pg name two databases; give one of them\n");
    const limit = await run(["sessions", "list", "--db", freshDb(), "--limit", "many"]);
    expect(limit.code).toBe(2);
    expect(limit.stderr).toMatch(/^ctxkit: .*--limit must be a number.*\n$/);
    for (const [value, wanted] of [
      ["0", "at least 1"],
      ["1001", "at most 1000"],
      ["2.5", "a whole number"],
    ]) {
      const refused = await run(["sessions", "list", "--db", freshDb(), "--limit", value!]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toBe(
        `ctxkit: invalid sessions list options: limit: --limit must be ${wanted}\n`,
      );
    }
    const days = await run(["sessions", "prune", "--db", freshDb(), "--days", "-1"]);
    expect(days.code).toBe(2);
    expect(days.stderr).toMatch(/--days must be at least 0\n$/);
    const missing = await run(["sessions", "import", join(home, "no-such.jsonl"), "--db", freshDb()]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^ctxkit: file ".*no-such\.jsonl" not found; check the path\n$/);
  });
});

describe("ctxkit sessions on PostgreSQL", () => {
  let server: TestPostgres | undefined;
  let url = "";
  const database = `ctxkit_cli_${randomUUID().replaceAll("-", "")}`;
  beforeAll(async () => {
    server = await postgresForTests();
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    await admin.end();
    const parsed = new URL(server.url);
    parsed.pathname = `/${database}`;
    url = parsed.toString();
  });
  afterAll(async () => {
    if (server) {
      const admin = new pg.Client({ connectionString: server.url });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
      await server.stop();
    }
  });

  it("imports, lists, shows and exports through --pg and CTXKIT_PG_URL like SQLite", async () => {
    const imported = await json<{ sessions: { id: string }[] }>(["import", short, "--pg", url]);
    expect(imported.sessions.map((session) => session.id)).toEqual([SHORT_ID]);
    const listed = await json<{ sessions: SessionRecord[] }>(["sessions", "list"], { CTXKIT_PG_URL: url });
    expect(listed.sessions.map((session) => session.id)).toEqual([SHORT_ID]);
    const shown = await json<{ session: SessionRecord }>(["sessions", "show", SHORT_ID, "--pg", url]);
    expect(shown.session.messageCount).toBe(5);

    const db = freshDb();
    expect((await run(["import", short, "--db", db])).code).toBe(0);
    const fromPg = await run(["sessions", "export", SHORT_ID, "--pg", url]);
    const fromSqlite = await run(["sessions", "export", SHORT_ID, "--db", db]);
    // Same transcript, imported at different moments: only updatedAt differs.
    const withoutUpdate = (text: string) => text.replace(/"updatedAt":"[^"]+"/, "");
    expect(withoutUpdate(fromPg.stdout)).toBe(withoutUpdate(fromSqlite.stdout));
    // --db wins over CTXKIT_PG_URL.
    const empty = freshDb();
    await (await openSqliteSessionStore({ path: empty })).close();
    expect(
      (
        await json<{ sessions: SessionRecord[] }>(["sessions", "list", "--db", empty], {
          CTXKIT_PG_URL: url,
        })
      ).sessions,
    ).toEqual([]);
    const unknown = await run(["sessions", "delete", "nope", "--pg", url]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe('ctxkit: session "nope" not found; list them with `ctxkit sessions list`\n');
  });
});
