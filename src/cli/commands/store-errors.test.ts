// Databases and paths the CLI cannot use as asked: each gives one actionable line and exit 2, and a database
// that cannot be written can still be read. Permissions do not stop root, so when the tests run as root the
// commands that need them run as `nobody` (a child process with another uid, through the real `bin.ts`).
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { Writable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { runCliChild } from "../../../test/support/run-cli-child.ts";
import { transcriptPath } from "../../../test/support/transcripts.ts";
import { SQLITE_APPLICATION_ID, SQLITE_SCHEMA_VERSION } from "../../store/sqlite/index.ts";
import { runCli } from "../main.ts";

const home = mkdtempSync(join(tmpdir(), "ctxkit-store-errors-"));
chmodSync(home, 0o755);
afterAll(() => {
  chmodSync(home, 0o755);
  for (const entry of readdirSync(home)) chmodSync(join(home, entry), 0o755);
  rmSync(home, { recursive: true, force: true });
});
let counter = 0;
const fresh = (name: string) => join(home, `${++counter}-${name}`);
const short = transcriptPath("claude-code__marot-spotter/short.jsonl");
const SHORT_ID = "55604662-cf2a-4331-851a-ec234028f8ca";

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

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The CLI in this process. */
async function run(argv: string[]): Promise<Outcome> {
  const stdout = capture();
  const stderr = capture();
  const code = await runCli(argv, { stdout: stdout.stream, stderr: stderr.stream, env: { HOME: home } });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** The CLI in a child process, as `nobody` when this process is root; killed after 50 s. */
const runChild = (argv: string[]) => runCliChild(argv, { home });

/** One line on stderr, starting `ctxkit: `, exit 2, nothing on stdout. */
function expectOneLine(outcome: Outcome, pattern: RegExp): void {
  expect(outcome.stdout).toBe("");
  expect(outcome.stderr).toMatch(/^ctxkit: [^\n]+\n$/);
  expect(outcome.stderr).toMatch(pattern);
  expect(outcome.code).toBe(2);
}

async function importedDb(folder: string): Promise<string> {
  mkdirSync(folder, { recursive: true });
  const db = join(folder, "ctxkit.db");
  expect((await run(["import", short, "--db", db])).code).toBe(0);
  return db;
}

describe("a database the user may not write", () => {
  it("is listed, shown, searched and exported; a write is refused in one line, exit 2", async () => {
    const folder = fresh("read-only");
    const db = await importedDb(folder);
    const out = fresh("out");
    mkdirSync(out);
    chmodSync(out, 0o777);
    chmodSync(db, 0o444);
    // In a read-only folder SQLite cannot even create the WAL index; in a writable one it can.
    for (const folderMode of [0o555, 0o777]) {
      chmodSync(folder, folderMode);
      const before = readFileSync(db);
      const backup = join(out, `backup-${folderMode}.jsonl`);
      const [listed, shown, searched, exported, printed, renamed, imported] = await Promise.all([
        runChild(["sessions", "list", "--db", db, "--json"]),
        runChild(["sessions", "show", SHORT_ID, "--db", db]),
        runChild(["sessions", "search", "server", "--db", db]),
        runChild(["sessions", "export", "--all", "-o", backup, "--db", db]),
        runChild(["sessions", "export", SHORT_ID, "--db", db]),
        runChild(["sessions", "rename", SHORT_ID, "new title", "--db", db]),
        runChild(["import", short, "--db", db, "--replace"]),
      ]);
      expect(listed.stderr).toBe("");
      expect(listed.code).toBe(0);
      expect((JSON.parse(listed.stdout) as { sessions: { id: string }[] }).sessions[0]?.id).toBe(SHORT_ID);
      expect(shown.code).toBe(0);
      expect(shown.stdout).toContain(SHORT_ID);
      expect(searched.code).toBe(0);
      expect(exported.code).toBe(0);
      expect(readFileSync(backup, "utf8")).toContain(SHORT_ID);
      expect(printed.stdout).toBe(readFileSync(backup, "utf8"));
      expectOneLine(renamed, /ctxkit\.db: .*(read-only|cannot be written).*permissions/);
      expectOneLine(imported, /ctxkit\.db: .*permissions/);
      expect(readFileSync(db).equals(before)).toBe(true);
    }
  });
});

describe("paths that cannot be used: one actionable line, exit 2", () => {
  it("--db naming a folder, a path through a file, an uncreatable or forbidden folder", async () => {
    const folder = fresh("a-folder.db");
    mkdirSync(folder);
    expectOneLine(
      await run(["sessions", "list", "--db", folder]),
      /a-folder\.db: is a folder, not a database/,
    );
    const file = fresh("plain-file");
    writeFileSync(file, "notes\n");
    expectOneLine(
      await run(["import", short, "--db", join(file, "sub", "ctxkit.db")]),
      /plain-file(\/sub)?: .*(is a file, not a folder|part of the path is a file)/,
    );
    // Node's recursive mkdir loops forever on /proc; ctxkit's does not.
    const proc = await runChild(["import", short, "--db", "/proc/ctxkit-no-such/ctxkit.db"]);
    expect(proc.killed).toBe(false);
    expectOneLine(proc, /\/proc\/ctxkit-no-such: cannot create the folder/);
    const locked = fresh("locked");
    mkdirSync(locked, { mode: 0o555 });
    chmodSync(locked, 0o555);
    expectOneLine(
      await runChild(["import", short, "--db", join(locked, "new", "ctxkit.db")]),
      /locked\/new: cannot create the folder: permission denied/,
    );
  });

  it("--db naming a file that does not exist, for a command that only reads: exit 2, nothing created", async () => {
    const folder = fresh("no-such-folder");
    const outcome = await runChild(["sessions", "list", "--db", join(folder, "typo.db")]);
    expectOneLine(
      outcome,
      /database ".*no-such-folder\/typo\.db" not found; check the --db path \(the default/,
    );
    expect(existsSync(folder)).toBe(false);
  });

  it("a transcript or export to import that is a folder", async () => {
    const folder = fresh("not-a-transcript");
    mkdirSync(folder);
    expectOneLine(
      await run(["import", folder, "--db", fresh("db.db")]),
      /not-a-transcript: cannot read the file: is a folder, not a file; give a file path/,
    );
    expectOneLine(
      await run(["sessions", "import", folder, "--db", fresh("db.db")]),
      /not-a-transcript: cannot read the file: is a folder/,
    );
  });

  it("an export output that is a folder or an existing file", async () => {
    const db = await importedDb(fresh("export-db"));
    const folder = fresh("out-folder");
    mkdirSync(folder);
    expectOneLine(
      await run(["sessions", "export", "--all", "-o", folder, "--db", db]),
      /out-folder: is a folder; give the path of a new file/,
    );
    expect(readdirSync(folder)).toEqual([]);
    expectOneLine(
      await run(["sessions", "export", "--all", "-o", join(folder, "missing", "x.jsonl"), "--db", db]),
      /x\.jsonl: cannot write the export: does not exist here/,
    );
  });
});

describe("a ctxkit database without its schema version", () => {
  it("is completed when its tables are ctxkit's, refused in one line when they are not", async () => {
    const db = await importedDb(fresh("unversioned"));
    const raw = new DatabaseSync(db);
    raw.exec("PRAGMA user_version = 0");
    raw.close();
    const version = () => {
      const check = new DatabaseSync(db, { readOnly: true });
      const { user_version } = check.prepare("PRAGMA user_version").get() as { user_version: number };
      check.close();
      return user_version;
    };
    const listed = await run(["sessions", "list", "--db", db, "--json"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(SHORT_ID);
    expect(version()).toBe(0); // reading writes nothing
    expect((await run(["sessions", "rename", SHORT_ID, "renamed", "--db", db])).code).toBe(0);
    expect(version()).toBe(SQLITE_SCHEMA_VERSION);

    const foreign = join(fresh("half"), "ctxkit.db");
    mkdirSync(join(foreign, ".."));
    const half = new DatabaseSync(foreign);
    half.exec(`PRAGMA application_id = ${SQLITE_APPLICATION_ID}; CREATE TABLE sessions (id TEXT)`);
    half.close();
    const before = readFileSync(foreign);
    expectOneLine(
      await run(["sessions", "list", "--db", foreign]),
      /ctxkit\.db: this ctxkit database has tables but no schema version/,
    );
    expect(readFileSync(foreign).equals(before)).toBe(true);
  });
});

describe("PostgreSQL connection strings the CLI cannot use", () => {
  it("refuses keyword settings (host=… password=…) with a usage error naming the URL form, reading nothing", async () => {
    const outcome = await run([
      "sessions",
      "list",
      "--pg",
      "host=127.0.0.1 port=1 user=app password=secret dbname=x",
    ]);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(
      /give a postgres:\/\/ URL, e\.g\. postgres:\/\/app@db\.example:5432\/ctxkit/,
    );
    expect(outcome.stderr).not.toMatch(/ENOTFOUND|base|secret/);
  });

  it("says a server it cannot reach is unreachable, not that a write was interrupted", async () => {
    const outcome = await run(["sessions", "list", "--pg", "postgres://app:secret@127.0.0.1:1/ctxkit"]);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/cannot reach PostgreSQL \(.*ECONNREFUSED.*\); check the host and port/);
    expect(outcome.stderr).not.toMatch(/interrupted write|secret/);
  });
});
