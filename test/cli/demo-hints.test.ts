// Issue 36: in a checkout the CLI runs with one documented command (`npm run ctxkit -- <args>`, the project's own
// Node, about a second), and every command the demo's "Where to look next" prints runs as printed.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { transcriptPath } from "../support/transcripts.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const home = mkdtempSync(join(tmpdir(), "ctxkit-hints-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));
// The user's environment: a private home, and a free port for `serve` (the setting's variable, not a flag).
const env = {
  PATH: process.env["PATH"],
  HOME: home,
  XDG_CONFIG_HOME: join(home, "config"),
  CTXKIT_SERVER_PORT: "0",
};

/** Runs a printed command line (split on spaces, as a shell would split these) in the checkout. */
function runLine(line: string) {
  const [command, ...args] = line.split(" ");
  return spawnSync(command!, args, { cwd: root, env, encoding: "utf8", timeout: 120_000 });
}

describe("the CLI from a checkout", () => {
  it("runs with `npm run ctxkit --`, and every command the demo's hints print runs as printed", async () => {
    const database = join(home, "demo.db");
    const demo = runLine(`npm run -s ctxkit -- demo --db ${database}`);
    expect(demo.stderr).toBe("");
    expect(demo.status).toBe(0);
    const hints = demo.stdout
      .slice(demo.stdout.indexOf("Where to look next:"))
      .split("\n")
      .slice(1)
      .filter((line) => line.startsWith("  "))
      .map((line) => line.trim().split(/ {2,}/)[0]!);
    expect(hints.length).toBeGreaterThanOrEqual(4);
    for (const hint of hints) expect(hint).toMatch(/^npm run ctxkit -- \S/);

    const sessionId = / as (ses_\w+)\./.exec(demo.stdout)![1]!;
    for (const hint of hints.filter((line) => !line.includes(" serve "))) {
      const line = hint.replace("<session.jsonl>", transcriptPath("claude-code__marot-spotter/short.jsonl"));
      const result = runLine(line);
      expect(result.status, `${line}\n${result.stderr}`).toBe(0);
      if (line.includes("sessions list")) expect(result.stdout).toContain(sessionId);
      if (line.includes("--session")) expect(result.stdout).toContain(`Replayed session ${sessionId}`);
    }

    // `serve` runs until stopped: it must come up and answer for the demo's session.
    const serve = hints.find((line) => line.includes(" serve "))!;
    const [command, ...args] = serve.split(" ");
    const child = spawn(command!, args, { cwd: root, env, detached: true });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let output = "";
        const seen = (chunk: Buffer) => {
          output += chunk.toString();
          const found = /listening on (http:\/\/\S+)/.exec(output);
          if (found) resolve(found[1]!);
        };
        child.stdout.on("data", seen);
        child.stderr.on("data", seen);
        child.on("exit", (code) => reject(new Error(`serve exited with ${code}: ${output}`)));
      });
      const answer = await fetch(`${url}/v1/sessions/${sessionId}`);
      expect(answer.status).toBe(200);
    } finally {
      process.kill(-child.pid!, "SIGTERM");
    }
    // The demo, three more CLI runs through npm and a server start: minutes on a loaded machine.
  }, 240_000);
});
