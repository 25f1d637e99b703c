import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { openSqliteSessionStore } from "../../src/store/sqlite/index.ts";
import { invalidApiKey, startFakeOpenAIServer } from "../../src/test/index.ts";
import { runChatCli, sandbox, type ChatRun } from "./chat-harness.ts";

/** One line on stderr, nothing else there. */
function oneErrorLine(run: ChatRun): string {
  const lines = run.stderr.split("\n").filter((line) => line !== "");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^ctxkit: /);
  expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
  return lines[0]!;
}

/** A 127.0.0.1 port nothing listens on (it was just free). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function storedSessions(db: string) {
  const store = await openSqliteSessionStore({ path: db });
  try {
    return (await store.listSessions()).sessions;
  } finally {
    await store.close();
  }
}

describe("ctxkit chat: every error a user can hit is one clear line and a non-zero exit", () => {
  it("no model configured", async () => {
    await using box = await sandbox();
    const run = await runChatCli([], { env: box.env, cwd: box.dir, lines: ["hello"] });
    expect(run.code).toBe(2);
    expect(oneErrorLine(run)).toMatch(
      /setting "model": no model configured; set CTXKIT_MODEL=provider:model/,
    );
    expect(run.stdout).toBe("");
  });

  it("a bad key: the provider's 401 names the key to check, and nothing is stored", async () => {
    await using box = await sandbox();
    await using server = await startFakeOpenAIServer({ responses: [invalidApiKey()] });
    const run = await runChatCli(["--model", `openai-compatible:fake-model@${server.url}`], {
      env: { ...box.env, OPENAI_COMPATIBLE_API_KEY: "sk-wrong" },
      cwd: box.dir,
      lines: ["hello"],
    });
    expect(run.code).toBe(1);
    expect(oneErrorLine(run)).toMatch(
      /rejected the API key \(401\): Incorrect API key provided.*; check OPENAI_COMPATIBLE_API_KEY/,
    );
    expect(server.requests).toHaveLength(1); // an auth failure is never retried
    expect(server.requests[0]?.headers.authorization).toBe("Bearer sk-wrong");
    expect(await storedSessions(box.db)).toEqual([]);
  });

  it("an unreachable endpoint: connection refused, after the bounded retries", async () => {
    await using box = await sandbox();
    const port = await closedPort();
    const run = await runChatCli([], {
      env: {
        ...box.env,
        CTXKIT_MODEL: "openai-compatible:fake-model",
        CTXKIT_BASE_URL: `http://127.0.0.1:${port}/v1`,
      },
      cwd: box.dir,
      lines: ["hello"],
    });
    expect(run.code).toBe(1);
    expect(oneErrorLine(run)).toMatch(
      new RegExp(`connection refused by http://127\\.0\\.0\\.1:${port}/v1; is the server .* running\\?`),
    );
    expect(await storedSessions(box.db)).toEqual([]);
  });

  it("a bad config value names the setting, where it came from and what is allowed", async () => {
    await using box = await sandbox();
    const run = await runChatCli([], {
      env: {
        ...box.env,
        CTXKIT_MODEL: "openai-compatible:m@http://127.0.0.1:1/v1",
        CTXKIT_MAX_RETRIES: "lots",
      },
      cwd: box.dir,
      lines: [],
    });
    expect(run.code).toBe(2);
    expect(oneErrorLine(run)).toMatch(/maxRetries.*CTXKIT_MAX_RETRIES/);
  });

  it("a bad --model string", async () => {
    await using box = await sandbox();
    const run = await runChatCli(["--model", "nonsense-provider:x"], {
      env: box.env,
      cwd: box.dir,
      lines: [],
    });
    expect(run.code).toBe(2);
    expect(oneErrorLine(run)).toMatch(/nonsense-provider/);
  });

  it("an unknown session id for --resume, and --resume with nothing saved", async () => {
    await using box = await sandbox();
    const env = { ...box.env, CTXKIT_MODEL: "openai-compatible:m@http://127.0.0.1:1/v1" };
    const unknown = await runChatCli(["--resume", "ses_missing"], { env, cwd: box.dir, lines: [] });
    expect(unknown.code).toBe(2);
    expect(oneErrorLine(unknown)).toMatch(/session "ses_missing" not found/);
    const none = await runChatCli(["--resume"], { env, cwd: box.dir, lines: [] });
    expect(none.code).toBe(2);
    expect(oneErrorLine(none)).toMatch(/no saved chat session to resume/);
  });

  it("an unknown session id for /resume in a script ends the chat with that line", async () => {
    await using box = await sandbox();
    await using server = await startFakeOpenAIServer({ responses: ["first answer"] });
    const run = await runChatCli(["--model", `openai-compatible:m@${server.url}`], {
      env: box.env,
      cwd: box.dir,
      lines: ["hello", "/resume ses_nope", "never sent"],
    });
    expect(run.code).toBe(2);
    expect(oneErrorLine(run)).toMatch(/session "ses_nope" not found/);
    expect(server.requests).toHaveLength(1);
    // The turn before the failure was saved.
    const [saved] = await storedSessions(box.db);
    expect(saved?.turnCount).toBe(1);
    expect(run.stdout).toMatch(new RegExp(`session ${saved!.id} saved`));
  });
});
