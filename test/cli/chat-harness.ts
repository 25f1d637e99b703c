import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { CommanderError } from "commander";
import { chatCommand } from "../../src/cli/commands/chat.ts";
import { describeError, exitCodeFor } from "../../src/cli/exit-codes.ts";
import { createProgram } from "../../src/cli/program.ts";

/** What one in-process `ctxkit chat` run printed and returned. */
export interface ChatRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A throwaway HOME with its own config folder and database. */
export interface Sandbox {
  readonly dir: string;
  readonly db: string;
  readonly env: Record<string, string>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Makes an isolated HOME / XDG_CONFIG_HOME / CTXKIT_DB for one test. */
export async function sandbox(): Promise<Sandbox> {
  const dir = await mkdtemp(join(tmpdir(), "ctxkit-chat-test-"));
  const db = join(dir, "ctxkit.db");
  return {
    dir,
    db,
    env: { HOME: dir, XDG_CONFIG_HOME: join(dir, "config"), CTXKIT_DB: db },
    [Symbol.asyncDispose]: () => rm(dir, { recursive: true, force: true }),
  };
}

/**
 * Runs `ctxkit chat <args>` in process, exactly as the CLI does (the same error printing and exit codes), with
 * `lines` as its piped stdin (not a terminal).
 */
export async function runChatCli(
  args: readonly string[],
  options: { env: Record<string, string>; cwd: string; lines: readonly string[] },
): Promise<ChatRun> {
  const stdin = new PassThrough();
  stdin.end(options.lines.map((line) => `${line}\n`).join(""));
  let stdout = "";
  let stderr = "";
  const io = {
    stdout: { write: (chunk: string) => ((stdout += chunk), true), isTTY: false } as never,
    stderr: { write: (chunk: string) => ((stderr += chunk), true), isTTY: false } as never,
    env: options.env,
  };
  const program = createProgram(
    [
      chatCommand({
        stdin: () => stdin,
        cwd: () => options.cwd,
        home: () => options.env["HOME"] ?? options.cwd,
        retryBaseDelayMs: 5,
      }),
    ],
    io,
  );
  let code = 0;
  try {
    await program.parseAsync(["chat", ...args], { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) code = error.exitCode === 0 ? 0 : 2;
    else {
      stderr += `${describeError(error)}\n`;
      code = exitCodeFor(error);
    }
  }
  return { code, stdout, stderr };
}

/** The JSON events of a `--json` run. */
export function jsonEvents(stdout: string): Record<string, unknown>[] {
  return stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
