import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { serverError, startFakeOpenAIServer, type FakeOpenAIResponse } from "../../src/test/index.ts";
import { runChatCli, sandbox } from "./chat-harness.ts";

/** A 401 whose message quotes the key it refused, as some OpenAI-compatible servers do. */
function refusing(key: string): FakeOpenAIResponse {
  return {
    status: 401,
    error: { message: `Incorrect API key provided: ${key}`, type: "invalid_request_error", param: null },
  };
}

describe("ctxkit chat never prints an API key", () => {
  it.each([
    ["a key of a known shape", "sk-ant-api03-QuotedBack0123456789abcdef"],
    ["a key of any other shape", "local-llm-secret-4711"],
  ])("a provider error quoting %s, in text and --json mode", async (_label, key) => {
    for (const json of [false, true]) {
      await using box = await sandbox();
      await using server = await startFakeOpenAIServer({ responses: [refusing(key)] });
      const run = await runChatCli(
        ["--model", `openai-compatible:fake-model@${server.url}`, ...(json ? ["--json"] : [])],
        { env: { ...box.env, OPENAI_COMPATIBLE_API_KEY: key }, cwd: box.dir, lines: ["hello"] },
      );
      expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${key}`); // the key was really used
      expect(run.code).toBe(1);
      expect(`${run.stdout}${run.stderr}`).toContain("Incorrect API key provided: [redacted]");
      expect(run.stdout).not.toContain(key);
      expect(run.stderr).not.toContain(key);
    }
  });

  it("a key from the settings file, of any shape", async () => {
    await using box = await sandbox();
    const key = "settings-only-key-0042";
    await mkdir(join(box.env["XDG_CONFIG_HOME"]!, "ctxkit"), { recursive: true });
    await writeFile(
      join(box.env["XDG_CONFIG_HOME"]!, "ctxkit", "settings.json"),
      JSON.stringify({ apiKeys: { openaiCompatible: key } }),
    );
    await using server = await startFakeOpenAIServer({ responses: [refusing(key)] });
    const run = await runChatCli(["--model", `openai-compatible:fake-model@${server.url}`], {
      env: box.env,
      cwd: box.dir,
      lines: ["hello"],
    });
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${key}`);
    expect(run.stderr).toContain("Incorrect API key provided: [redacted]");
    expect(`${run.stdout}${run.stderr}`).not.toContain(key);
  });

  it("a retried failure quoting the key: the retry notice", async () => {
    await using box = await sandbox();
    const key = "AIzaSyQuotedBack0123456789abcdefghijkl";
    await using server = await startFakeOpenAIServer({
      responses: [serverError(`upstream failed for key=${key}`), "recovered"],
    });
    const run = await runChatCli(["--model", `openai-compatible:fake-model@${server.url}`, "--json"], {
      env: { ...box.env, OPENAI_COMPATIBLE_API_KEY: key },
      cwd: box.dir,
      lines: ["hello"],
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('"type":"retry"');
    expect(run.stdout).toContain("recovered");
    expect(run.stdout).not.toContain(key);
    expect(run.stderr).not.toContain(key);
  });
});
