import { randomUUID } from "node:crypto";
import { ConfigError } from "../../errors/errors.ts";
import type { Executor } from "../../sync/executor.ts";
import { runCliCommand } from "../../sync/run-cli-command.ts";

/** An executor given on the command line: `name=command arg…`. */
export interface ExecutorSpec {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
}

/**
 * Parses `--executor name=command arg…` (arguments split on spaces; no shell is involved).
 *
 * @example
 * parseExecutorSpec("desktop=claude -p"); // { name: "desktop", command: "claude", args: ["-p"] }
 */
export function parseExecutorSpec(text: string): ExecutorSpec {
  const match = /^([A-Za-z][A-Za-z0-9_-]{0,63})=(.+)$/.exec(text.trim());
  const words = match?.[2]?.trim().split(/\s+/) ?? [];
  if (match === null || words.length === 0) {
    throw new ConfigError(
      "--executor",
      `"${text}" is not name=command; write e.g. --executor "desktop=claude -p" (a letter-first name, then the command)`,
    );
  }
  return { name: match[1]!, command: words[0]!, args: words.slice(1) };
}

/**
 * An executor that runs a command once per intent: the executor's message (prior conversation and the
 * request) on stdin, its stdout streamed to the client and returned as the answer. The command keeps no
 * session of its own, so the session id only identifies the runs of one sync session.
 *
 * @example
 * const desktop = commandExecutor({ name: "desktop", command: "claude", args: ["-p"] });
 */
export function commandExecutor(
  spec: ExecutorSpec,
  options: { timeoutMs?: number; maxOutputBytes?: number } = {},
): Executor {
  return async (_intent, run) => {
    const { stdout } = await runCliCommand({
      command: spec.command,
      args: spec.args,
      input: run.message,
      timeoutMs: options.timeoutMs ?? 600_000,
      maxOutputBytes: options.maxOutputBytes ?? 10 * 1024 * 1024,
      signal: run.signal,
      onStdout: run.emit,
    });
    return {
      answer: stdout.trim(),
      toolSummary: [],
      sessionId: run.executorSessionId ?? `${spec.name}-${randomUUID()}`,
    };
  };
}
