import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresForTests } from "../../../test/store/pg-server.ts";
import { bundled } from "../../../test/support/bundled.ts";
import { redactSecrets } from "../../errors/redact-secrets.ts";
import { startFakeOpenAIServer, type FakeOpenAIServer } from "../../test/fake-openai-server.ts";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const node = join(root, "node_modules/.bin/node");
const bin = bundled("ctxkit");

let home: string;
let upstream: FakeOpenAIServer;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "ctxkit-chat-resume-"));
  upstream = await startFakeOpenAIServer({
    responses: (request) => ({ text: `reply ${request.index + 1}` }),
  });
});

afterAll(async () => {
  await upstream.close();
  rmSync(home, { recursive: true, force: true });
});

/**
 * Runs a shell command line with `ctxkit` standing for this checkout's CLI, with `input` on stdin (a child
 * process, not spawnSync: the fake model server answers from this process's event loop).
 */
function shell(
  commandLine: string,
  input: string,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn("bash", ["-c", commandLine.replace(/^ctxkit /, `'${node}' '${bin}' `)], {
    cwd: home,
    env: { PATH: process.env["PATH"], HOME: home, XDG_CONFIG_HOME: join(home, ".config") },
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(input);
  return new Promise((resolve) => child.once("close", (status) => resolve({ status, stdout, stderr })));
}

describe("ctxkit chat's resume hint", () => {
  it("names every option the session needs to be found again, quoted for the shell, and works as printed", async () => {
    const database = join(home, "my chats", "it's here.db");
    const model = `openai-compatible:fake-model@${upstream.url}`;
    const first = await shell(
      `ctxkit chat --db '${database.replaceAll("'", `'\\''`)}' --model '${model}'`,
      "hello\n",
    );
    expect(first.stderr).toBe("");
    expect(first.status).toBe(0);
    const hint = /resume with: (ctxkit chat --resume .+)$/m.exec(first.stdout)?.[1];
    expect(hint).toBeDefined();
    expect(hint).toContain("--db ");
    expect(hint).toContain(`--model ${model}`);

    const resumed = await shell(hint!, "again\n");
    expect(resumed.stderr).toBe("");
    expect(resumed.status).toBe(0);
    expect(resumed.stdout).toMatch(/resumed, 1 turns/);
    expect(resumed.stdout).toContain("reply 2");
  });

  it("names the PostgreSQL database it used, with the URL's password redacted", async () => {
    const postgres = await postgresForTests();
    try {
      const run = await shell(
        `ctxkit chat --pg '${postgres.url}' --model openai-compatible:m@${upstream.url}`,
        "hello postgres\n",
      );
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
      const hint = /resume with: (ctxkit chat --resume .+)$/m.exec(run.stdout)?.[1];
      const shown = redactSecrets(postgres.url);
      expect(hint).toContain(`--pg ${/^[\w@%+=:,./-]+$/.test(shown) ? shown : `'${shown}'`}`);
      const password = new URL(postgres.url).password;
      if (password !== "") expect(run.stdout).not.toContain(password);
    } finally {
      await postgres.stop();
    }
  });
});
