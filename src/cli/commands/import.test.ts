import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { transcriptPath } from "../../../test/support/transcripts.ts";
import { conversationStats } from "../../formats/transcripts/conversation-stats.ts";
import { importTranscriptFile } from "../../formats/transcripts/import-transcript.ts";
import { openSqliteSessionStore } from "../../store/sqlite/index.ts";
import { runCli } from "../main.ts";

function capture(isTTY = false) {
  let text = "";
  const stream = Object.assign(
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        text += chunk.toString();
        done();
      },
    }),
    { isTTY },
  );
  return { stream, text: () => text };
}

const home = mkdtempSync(join(tmpdir(), "ctxkit-import-cli-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));
let databases = 0;
const freshDb = () => join(home, `db-${++databases}.db`);

async function run(argv: string[], options: { tty?: boolean } = {}) {
  const stdout = capture();
  const stderr = capture(options.tty === true);
  const code = await runCli(argv, { stdout: stdout.stream, stderr: stderr.stream, env: { HOME: home } });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

const spotter = transcriptPath("claude-code__marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl");
const tauBench = transcriptPath("tau-bench/gpt-4o-airline.json");

describe("ctxkit import", () => {
  it("stores a Claude Code transcript and prints { sessions: [{ id, messages, turns, toolCalls }] }", async () => {
    const db = freshDb();
    const result = await run(["import", spotter, "--db", db, "--json"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    const printed = JSON.parse(result.stdout) as { sessions: Record<string, unknown>[] };
    const conversations = await importTranscriptFile(spotter);
    expect(printed).toEqual({
      sessions: conversations.map((conversation) => {
        const stats = conversationStats(conversation);
        return { id: stats.id, messages: stats.messages, turns: stats.turns, toolCalls: stats.toolCalls };
      }),
      skipped: [],
    });
    expect(Object.keys(printed.sessions[0]!)).toEqual(["id", "messages", "turns", "toolCalls"]);
    // jq -r 'select(.type=="assistant") | .message.content[] | select(.type=="tool_use") | .id' FILE | sort -u | wc -l
    expect(printed.sessions[0]).toMatchObject({ toolCalls: 150 });

    const store = await openSqliteSessionStore({ path: db, retentionDays: 0 });
    for (const conversation of conversations) {
      expect(await store.loadMessages(conversation.id, { strategy: "all", media: "inline" })).toEqual(
        conversation.messages,
      );
      expect((await store.getSession(conversation.id))?.origin).toMatchObject({
        format: "claude-code",
        source: spotter,
      });
    }
    await store.close();
  });

  it("imports every conversation of a multi-conversation file, with progress on a terminal only", async () => {
    const quiet = await run(["import", tauBench, "--db", freshDb()]);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe("");
    const lines = quiet.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^session +messages +turns +tool calls$/);
    // jq '[.[].traj | length] | add' / jq '[.[].traj[].tool_calls // [] | length] | add'
    expect(lines.at(-1)).toMatch(/^total \(200 sessions\) +5,308 +[\d,]+ +1,164$/);
    expect(lines).toHaveLength(2 + 200 + 1);

    const shown = await run(["import", tauBench, "--db", freshDb()], { tty: true });
    expect(shown.code).toBe(0);
    expect(shown.stderr).toMatch(/\rimport \[#+\] 200\/200\n$/);
  });

  it("refuses to import a transcript twice, naming --replace and --skip-existing", async () => {
    const db = freshDb();
    expect((await run(["import", spotter, "--db", db])).code).toBe(0);
    const again = await run(["import", spotter, "--db", db]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(
      /^ctxkit: session [^ ]+ already exists; nothing was imported; pass --replace to overwrite existing sessions or --skip-existing to import only the new ones\n$/,
    );
    expect((await run(["import", spotter, "--db", db, "--replace"])).code).toBe(0);
    const both = await run(["import", spotter, "--db", db, "--replace", "--skip-existing"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toBe(
      "ctxkit: --replace and --skip-existing contradict each other; give one of them\n",
    );
  });

  it("--skip-existing imports the new sessions of a file and reports the existing ones", async () => {
    const db = freshDb();
    const first = await run(["import", tauBench, "--db", db, "--json"]);
    const all = (JSON.parse(first.stdout) as { sessions: { id: string }[] }).sessions.map(
      (session) => session.id,
    );
    const some = all.filter((_, index) => index % 3 === 0);
    expect((await run(["sessions", "delete", ...some, "--db", db])).code).toBe(0);

    const again = await run(["import", tauBench, "--db", db, "--skip-existing", "--json"]);
    expect(again.code).toBe(0);
    const result = JSON.parse(again.stdout) as { sessions: { id: string }[]; skipped: string[] };
    expect(result.sessions.map((session) => session.id)).toEqual(some);
    expect(result.skipped).toEqual(all.filter((id) => !some.includes(id)));

    const text = await run(["import", tauBench, "--db", db, "--skip-existing"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toBe(`no new sessions imported\nskipped 200 existing sessions: ${all.join(", ")}\n`);
  });

  it("imports a transcript still being written up to its last whole line, only when told to", async () => {
    const lines = readFileSync(transcriptPath("claude-code__marot-spotter/short.jsonl"), "utf8")
      .trimEnd()
      .split("\n");
    const path = join(home, "live.jsonl");
    writeFileSync(path, `${lines.join("\n")}\n${lines[4]!.slice(0, 60)}`);
    const db = freshDb();
    const refused = await run(["import", path, "--db", db]);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toBe(
      `ctxkit: ${path}:${lines.length + 1}: the last line is incomplete (the transcript may still be being written); ` +
        `pass --drop-partial-last-line to import it up to line ${lines.length}; expected complete JSON lines\n`,
    );
    const imported = await run(["import", path, "--db", db, "--drop-partial-last-line", "--json"]);
    expect(imported.code).toBe(0);
    const whole = join(home, "whole.jsonl");
    writeFileSync(whole, `${lines.join("\n")}\n`);
    const reference = await run(["import", whole, "--db", freshDb(), "--json"]);
    expect(imported.stdout).toBe(reference.stdout);
  });

  it("reports a broken transcript on one line and stores nothing", async () => {
    const lines = readFileSync(transcriptPath("claude-code__marot-spotter/short.jsonl"), "utf8").split("\n");
    const path = join(home, "broken.jsonl");
    writeFileSync(path, [lines[0], lines[1], lines[2]!.slice(0, 40), ...lines.slice(3)].join("\n"));
    const db = freshDb();
    const result = await run(["import", path, "--db", db]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^ctxkit: .*broken\.jsonl:3: invalid JSON \(.*\); expected .+\n$/);
    const store = await openSqliteSessionStore({ path: db, retentionDays: 0 });
    expect((await store.listSessions()).sessions).toEqual([]);
    await store.close();

    const missing = await run(["import", join(home, "absent.jsonl"), "--db", freshDb()]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^ctxkit: transcript file ".*absent\.jsonl" not found; check the path\n$/);
    const forced = await run(["import", spotter, "--format", "gemini-cli", "--db", freshDb()]);
    expect(forced.code).toBe(2);
    expect(forced.stderr.trimEnd().split("\n")).toHaveLength(1);
  });
});

describe("ctxkit import of a ctxkit export with media", () => {
  /** A database holding session `img`: a prompt with an image stored as a blob, and a reply. */
  async function dbWithImage(): Promise<string> {
    const db = freshDb();
    const store = await openSqliteSessionStore({ path: db, retentionDays: 0 });
    const data = Buffer.alloc(3000, 7).toString("base64");
    await store.appendTurn("img", [
      {
        role: "user",
        content: [
          { type: "text", text: "look" },
          { type: "image", mediaType: "image/png", data },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "a grey square" }] },
    ]);
    await store.close();
    return db;
  }

  it("keeps the images: the import exports again byte for byte", async () => {
    const exported = join(home, "with-media.jsonl");
    expect((await run(["sessions", "export", "img", "-o", exported, "--db", await dbWithImage()])).code).toBe(
      0,
    );
    expect(readFileSync(exported, "utf8")).toContain('"type":"blob"');
    for (const command of [["import"], ["sessions", "import"]]) {
      const db = freshDb();
      expect((await run([...command, exported, "--db", db])).code).toBe(0);
      const again = await run(["sessions", "export", "img", "--db", db]);
      expect(again.stdout).toBe(readFileSync(exported, "utf8"));
    }
  });

  it("refuses an export whose blob lines are missing, naming the session, message and blob; stores nothing", async () => {
    const exported = join(home, "media-cut.jsonl");
    expect((await run(["sessions", "export", "img", "-o", exported, "--db", await dbWithImage()])).code).toBe(
      0,
    );
    const lines = readFileSync(exported, "utf8").split("\n");
    const blob = lines.find((line) => line.startsWith('{"type":"blob"'));
    const ref = (JSON.parse(blob!) as { ref: string }).ref;
    writeFileSync(exported, lines.filter((line) => line !== blob).join("\n"));
    for (const command of [["import"], ["sessions", "import"]]) {
      const db = freshDb();
      const result = await run([...command, exported, "--db", db]);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toBe(
        `ctxkit: message 0 of session img refers to media ${ref}, which the import does not carry and the store ` +
          "does not hold; nothing was written. Export the session again from the store that holds its media " +
          "(`ctxkit sessions export` writes each blob as a blob line) and import that file\n",
      );
      const store = await openSqliteSessionStore({ path: db, retentionDays: 0 });
      expect((await store.listSessions()).sessions).toEqual([]);
      await store.close();
    }
  });
});
