import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { bundled } from "../../../test/support/bundled.ts";
import { transcriptPath } from "../../../test/support/transcripts.ts";
import { conversationStats } from "../../formats/transcripts/conversation-stats.ts";
import { importTranscriptFile } from "../../formats/transcripts/import-transcript.ts";
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

async function run(...argv: string[]) {
  const stdout = capture();
  const stderr = capture();
  const code = await runCli(argv, { stdout: stdout.stream, stderr: stderr.stream, env: {} });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

const spotter = transcriptPath("claude-code__marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl");
const tauBench = transcriptPath("tau-bench/gpt-4o-airline.json");
const scratch = mkdtempSync(join(tmpdir(), "ctxkit-stats-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A Claude Code file whose third line is cut off. */
function brokenTranscript(): string {
  const directory = mkdtempSync(join(scratch, "broken-"));
  const path = join(directory, "broken.jsonl");
  const lines = readFileSync(transcriptPath("claude-code__marot-spotter/short.jsonl"), "utf8").split("\n");
  writeFileSync(path, [lines[0], lines[1], lines[2]!.slice(0, 40), ...lines.slice(3)].join("\n"));
  return path;
}

describe("ctxkit stats", () => {
  it("prints per-conversation figures as JSON", async () => {
    const result = await run("stats", spotter, "--json");
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    const printed = JSON.parse(result.stdout) as { conversations: Record<string, unknown>[] };
    const expected = (await importTranscriptFile(spotter)).map((conversation) =>
      conversationStats(conversation),
    );
    expect(printed).toEqual({ conversations: expected });
    expect(Object.keys(printed.conversations[0]!)).toEqual([
      "id",
      "format",
      "messages",
      "turns",
      "toolCalls",
      "toolResultChars",
      "tokens",
    ]);
    // jq -r 'select(.type=="assistant") | .message.content[] | select(.type=="tool_use") | .id' FILE | sort -u | wc -l
    expect(printed.conversations[0]).toMatchObject({ format: "claude-code", toolCalls: 150 });
    expect(printed.conversations[0]!["tokens"]).toBeGreaterThan(10_000);
  });

  it("prints an aligned table with a total row for a file of many conversations", async () => {
    const result = await run("stats", tauBench);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(1 + 200 + 1);
    expect(lines[0]).toMatch(
      /^conversation +format +messages +turns +tool calls +tool output chars +tokens$/,
    );
    expect(lines[1]).toMatch(/^gpt-4o-airline:task-0-trial-0 +openai +\d+ +\d+ +\d+ +\d+ +\d+$/);
    // jq '[.[].traj | length] | add' / jq '[.[].traj[].tool_calls // [] | length] | add'
    expect(lines.at(-1)).toMatch(/^total \(200 conversations\) +5308 +\d+ +1164 +\d+ +\d+$/);
    expect(new Set(lines.map((line) => line.length)).size).toBe(1);
  });

  it("honours --format and rejects an unknown one", async () => {
    const forced = await run("stats", spotter, "--format", "gemini-cli");
    expect(forced.code).toBe(2);
    expect(forced.stderr).toMatch(
      /^ctxkit: .*4d5611e5-241a-462a-8d15-5122611a9569\.jsonl:2: invalid JSON \(Unexpected non-whitespace character after JSON\); expected a Gemini CLI session/,
    );
    const unknown = await run("stats", spotter, "--format", "yaml");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(
      /Allowed choices are claude-code, codex, gemini-cli, openai, swe-agent, ctxkit, auto/,
    );
  });

  it("reports an unparseable file on one line with its line number and exit code 2", async () => {
    const path = brokenTranscript();
    const result = await run("stats", path);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(
      new RegExp(`^ctxkit: ${path.replaceAll("/", "\\/")}:3: invalid JSON \\(.*\\); expected .+\\n$`),
    );
    const missing = await run("stats", join(tmpdir(), "no-such-transcript.jsonl"));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /^ctxkit: transcript file ".*no-such-transcript\.jsonl" not found; check the path\n$/,
    );
  });

  it("answers a folder given as the transcript with one actionable line and exit code 2", async () => {
    const folder = mkdtempSync(join(scratch, "folder-"));
    for (const command of ["stats", "replay", "import"]) {
      const result = await run(
        command,
        folder,
        ...(command === "import" ? ["--db", join(folder, "x.db")] : []),
      );
      expect(result.code, command).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toBe(
        `ctxkit: ${folder}: cannot read the file: is a folder, not a file; give a file path\n`,
      );
    }
  });

  it("exits with code 2 and one line, no stack trace, when run as a process", () => {
    const path = brokenTranscript();
    const root = fileURLToPath(new URL("../../../", import.meta.url));
    const child = spawnSync(join(root, "node_modules/.bin/node"), [bundled("ctxkit"), "stats", path], {
      cwd: root,
      encoding: "utf8",
    });
    expect(child.status).toBe(2);
    expect(child.stdout).toBe("");
    expect(child.stderr).toMatch(new RegExp(`^ctxkit: ${path.replaceAll("/", "\\/")}:3: .* expected .+\\n$`));
    expect(child.stderr).not.toMatch(/\n\s+at /);
  });
});
