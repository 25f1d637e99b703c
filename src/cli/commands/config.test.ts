import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { CommanderError } from "commander";
import { afterEach, describe, expect, it } from "vitest";
import { describeError, exitCodeFor } from "../exit-codes.ts";
import { runCli } from "../main.ts";
import { createProgram, type CliIo } from "../program.ts";
import { configCommand } from "./config.ts";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function sandbox() {
  const root = mkdtempSync(join(tmpdir(), "ctxkit-config-cli-"));
  roots.push(root);
  const home = join(root, "home");
  const repo = join(root, "repo");
  mkdirSync(join(repo, ".git"), { recursive: true });
  mkdirSync(home, { recursive: true });
  return {
    root,
    home,
    repo,
    projectFile: join(repo, ".ctxkit", "settings.json"),
    userFile: join(home, ".config", "ctxkit", "settings.json"),
  };
}

function capture() {
  const stream = new PassThrough();
  let text = "";
  stream.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
  return { stream, text: () => text };
}

/** Runs `ctxkit config …` the way runCli does, with the settings sandbox as cwd and home. */
async function run(argv: string[], where: { home: string; repo: string }, env: Record<string, string> = {}) {
  const stdout = capture();
  const stderr = capture();
  const io: CliIo = { stdout: stdout.stream, stderr: stderr.stream, env: { HOME: where.home, ...env } };
  const program = createProgram([configCommand({ cwd: () => where.repo })], io);
  let code = 0;
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) code = error.exitCode === 0 ? 0 : 2;
    else {
      io.stderr.write(`${describeError(error)}\n`);
      code = exitCodeFor(error);
    }
  }
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

describe("ctxkit config", () => {
  it("set parses numbers, booleans and text, and writes the project file by default", async () => {
    const where = sandbox();
    expect((await run(["config", "set", "contextWindow", "128000"], where)).code).toBe(0);
    expect((await run(["config", "set", "memory.enabled", "false"], where)).code).toBe(0);
    const model = await run(["config", "set", "model", "ollama:llama3.1:8b"], where);
    expect(model.stdout).toBe(`model = "ollama:llama3.1:8b" in ${where.projectFile}\n`);
    expect(JSON.parse(readFileSync(where.projectFile, "utf8"))).toEqual({
      contextWindow: 128_000,
      memory: { enabled: false },
      model: "ollama:llama3.1:8b",
    });
  });

  it("set --user writes the user file and warns when the project file hides it", async () => {
    const where = sandbox();
    await run(["config", "set", "preset", "minimal"], where);
    const result = await run(["config", "set", "preset", "aggressive", "--user", "--json"], where);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      key: "preset",
      value: "aggressive",
      scope: "user",
      file: where.userFile,
    });
    expect(result.stderr).toBe(`note: ${where.projectFile} overrides this value\n`);
  });

  it("set warns when an environment variable overrides the value", async () => {
    const where = sandbox();
    const result = await run(["config", "set", "model", "openai:gpt-4.1"], where, {
      CTXKIT_MODEL: "ollama:qwen3",
    });
    expect(result.stderr).toBe("note: CTXKIT_MODEL is set and overrides this value\n");
  });

  it("list shows each value with its source, masking API keys", async () => {
    const where = sandbox();
    await run(["config", "set", "apiKeys.openai", "sk-proj-0123456789abcd", "--user"], where);
    await run(["config", "set", "policy.maxTurns", "40"], where);
    const result = await run(["config", "list"], where, { CTXKIT_MODEL: "anthropic:claude-sonnet-4-5" });
    expect(result.code).toBe(0);
    const lines = result.stdout.split("\n");
    expect(lines[0]).toMatch(/^KEY\s+VALUE\s+SOURCE$/);
    const line = (key: string) =>
      lines.find((candidate) => candidate.startsWith(`${key} `))?.replace(/\s+/g, " ");
    expect(line("model")).toBe("model anthropic:claude-sonnet-4-5 env CTXKIT_MODEL");
    expect(line("apiKeys.openai")).toBe(`apiKeys.openai ••••abcd user ${where.userFile}`);
    expect(line("policy.maxTurns")).toBe(`policy.maxTurns 40 project ${where.projectFile}`);
    expect(line("policy.compactionTrigger")).toBe("policy.compactionTrigger 0.9 preset default");
    expect(line("sessionRetentionDays")).toBe("sessionRetentionDays 30 default");
    expect(result.stdout).not.toContain("sk-proj-0123456789abcd");
  });

  it("set, list and list --json hide the PostgreSQL password; get and --show-secrets show it", async () => {
    const where = sandbox();
    const url = "postgres://ctxkit:hunter2pw@db.internal:5432/ctxkit";
    const masked = "postgres://ctxkit:••••@db.internal:5432/ctxkit";
    const set = await run(["config", "set", "pgUrl", url, "--user"], where);
    expect(set.stdout).toBe(`pgUrl = "${masked}" in ${where.userFile}\n`);
    const setJson = await run(["config", "set", "pgUrl", url, "--user", "--json"], where);
    expect(JSON.parse(setJson.stdout)).toMatchObject({ value: masked });
    const list = await run(["config", "list"], where);
    expect(list.stdout).toContain(masked);
    const listJson = await run(["config", "list", "--json"], where);
    expect(listJson.stdout).toContain(masked);
    for (const output of [set, setJson, list, listJson]) {
      expect(output.stdout + output.stderr).not.toContain("hunter2pw");
    }
    expect((await run(["config", "list", "--show-secrets"], where)).stdout).toContain(url);
    expect((await run(["config", "get", "pgUrl"], where)).stdout).toBe(`${url}\n`);
    // A URL without a password is shown as it is.
    await run(["config", "set", "pgUrl", "postgres://db.internal/ctxkit", "--user"], where);
    expect((await run(["config", "list"], where)).stdout).toContain("postgres://db.internal/ctxkit");
  });

  it("a settings file that holds a key or a password is private (0600), also one that was not", async () => {
    const where = sandbox();
    const mode = (file: string) => statSync(file).mode & 0o777;
    await run(["config", "set", "model", "openai:gpt-4.1"], where);
    expect(mode(where.projectFile)).toBe(0o644); // nothing secret in it
    const secret = await run(["config", "set", "apiKeys.openai", "sk-proj-0123456789abcd"], where);
    expect(secret.stderr).toMatch(/project settings are often committed/);
    expect(mode(where.projectFile)).toBe(0o600);
    await run(["config", "set", "policy.maxTurns", "30"], where);
    expect(mode(where.projectFile)).toBe(0o600); // stays private while it holds the key

    const other = sandbox();
    await run(["config", "set", "pgUrl", "postgres://u:pw123456@db/x"], other);
    expect(mode(other.projectFile)).toBe(0o600);

    // A user file someone made readable by everyone is made private again when it is rewritten.
    mkdirSync(join(where.home, ".config", "ctxkit"), { recursive: true });
    writeFileSync(where.userFile, JSON.stringify({ apiKeys: { anthropic: "sk-ant-0123456789abcdef" } }));
    chmodSync(where.userFile, 0o644);
    await run(["config", "set", "preset", "minimal", "--user"], where);
    expect(mode(where.userFile)).toBe(0o600);
  });

  it("a key pasted into the wrong setting is not echoed back, whatever its shape", async () => {
    const where = sandbox();
    const stderr = capture();
    const previous = process.cwd();
    process.chdir(where.repo);
    try {
      const io: CliIo = {
        stdout: capture().stream,
        stderr: stderr.stream,
        env: { HOME: where.home, MY_LLM_API_KEY: "opaque-key-0123" },
      };
      expect(await runCli(["config", "set", "model", "sk-ant-api03-Pasted0123456789abcdef"], io)).toBe(2);
      expect(await runCli(["config", "set", "model", "opaque-key-0123"], io)).toBe(2);
    } finally {
      process.chdir(previous);
    }
    expect(stderr.text()).toMatch(/^ctxkit: setting "model": "\[redacted\]" is not allowed/);
    expect(stderr.text()).not.toContain("Pasted0123456789");
    expect(stderr.text()).not.toContain("opaque-key-0123");
  });

  it("list --json and get --json carry the source; get prints the bare value", async () => {
    const where = sandbox();
    await run(["config", "set", "server.port", "8080"], where);
    const list = JSON.parse((await run(["config", "list", "--json"], where)).stdout) as {
      key: string;
      value: unknown;
    }[];
    expect(list.find((entry) => entry.key === "server.port")).toMatchObject({
      value: 8080,
      source: { kind: "project", file: where.projectFile },
      env: "CTXKIT_SERVER_PORT",
    });
    expect((await run(["config", "get", "server.port"], where)).stdout).toBe("8080\n");
    const got = JSON.parse((await run(["config", "get", "server.host", "--json"], where)).stdout) as unknown;
    expect(got).toMatchObject({ key: "server.host", value: "127.0.0.1", source: { kind: "default" } });
  });

  it("unset removes a key so the next source applies", async () => {
    const where = sandbox();
    await run(["config", "set", "sessionRetentionDays", "7"], where);
    const removed = await run(["config", "unset", "sessionRetentionDays"], where);
    expect(removed.stdout).toBe(`removed sessionRetentionDays from ${where.projectFile}\n`);
    expect((await run(["config", "get", "sessionRetentionDays"], where)).stdout).toBe("30\n");
  });

  it.each([
    [
      ["config", "set", "preset", "turbo"],
      /^ctxkit: setting "preset": "turbo" is not allowed; expected one of default, aggressive, minimal, off$/,
    ],
    [["config", "set", "contextWindow", "big"], /expected a whole number above 0$/],
    [["config", "set", "model", "gpt-4o"], /names no provider/],
    [["config", "get", "colour"], /setting "colour": unknown setting; run `ctxkit config list`/],
    [["config", "set", "model", "openai:x", "--user", "--project"], /cannot be used with/],
  ])("%j fails with one line and exit code 2", async (argv, message) => {
    const where = sandbox();
    const result = await run(argv, where);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr.trimEnd().split("\n")[0]).toMatch(message);
  });

  it("a malformed settings file is reported with its position and exit code 2", async () => {
    const where = sandbox();
    mkdirSync(join(where.repo, ".ctxkit"));
    writeFileSync(where.projectFile, '{ "model": "openai:gpt-4.1", }');
    const result = await run(["config", "list"], where);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `ctxkit: ${where.projectFile}:1:30: invalid JSON: Expected double-quoted property name; fix the file or delete it to fall back to other settings\n`,
    );
  });

  it("path shows both files", async () => {
    const where = sandbox();
    await run(["config", "set", "model", "openai:gpt-4.1", "--user"], where);
    const paths = JSON.parse((await run(["config", "path", "--json"], where)).stdout) as unknown;
    expect(paths).toEqual({ user: where.userFile, project: where.projectFile });
    const text = (await run(["config", "path"], where)).stdout;
    expect(text).toContain(`project  ${where.projectFile} (not created yet)`);
  });

  it("is registered in the real CLI, whose bad-value exit code is 2", async () => {
    const where = sandbox();
    const stdout = capture();
    const stderr = capture();
    const previous = process.cwd();
    process.chdir(where.repo);
    try {
      const io: CliIo = {
        stdout: stdout.stream,
        stderr: stderr.stream,
        env: { HOME: where.home, CTXKIT_SERVER_PORT: "99999" },
      };
      expect(await runCli(["config", "get", "server.port"], io)).toBe(2);
    } finally {
      process.chdir(previous);
    }
    expect(stderr.text()).toContain(
      "from CTXKIT_SERVER_PORT is not allowed; expected a whole number from 0 to 65535",
    );
  });
});
