import { homedir } from "node:os";
import type { Command } from "commander";
import type { ChatFlags } from "../chat/start-chat.ts";
import type { CliIo, CommandRegistration } from "../program.ts";

/** Where `ctxkit chat` reads input and settings; tests point it at a sandbox. */
export interface ChatCommandOptions {
  stdin?: () => NodeJS.ReadableStream & { isTTY?: boolean };
  cwd?: () => string;
  home?: () => string;
  /** First backoff delay of provider retries. */
  retryBaseDelayMs?: number;
}

/**
 * Builds the `ctxkit chat` command: a terminal chat with streaming replies, persisted and governed sessions,
 * slash commands and a `--json` event stream.
 *
 * @example
 * createProgram([chatCommand({ stdin: () => input, cwd: () => dir, home: () => dir })], io);
 */
export function chatCommand(options: ChatCommandOptions = {}): CommandRegistration {
  return (program: Command, io: CliIo) => {
    program
      .command("chat")
      .description("chat with the configured model; sessions are governed by ctxkit and saved (/help inside)")
      .option("--resume [id]", "continue a saved session (the latest one when no id is given)")
      .option("--model <provider:model>", "model to use instead of the model setting")
      .option("--session-title <title>", "title of the session")
      .option("--json", "read lines from stdin and print one JSON event per line (for scripts)")
      .option("--pg <url>", "store sessions in PostgreSQL (default: CTXKIT_PG_URL or the pgUrl setting)")
      .option("--db <path>", "SQLite database file (default: CTXKIT_DB or the db setting)")
      .option(
        "--pipeline <module>",
        "governance pipeline module: its default export is a pipeline, or a function of the preset's returning one",
      )
      .action(async (flags: ChatFlags) => {
        const { runChat } = await import("../chat/start-chat.ts");
        await runChat(flags, {
          io,
          stdin: options.stdin?.() ?? process.stdin,
          cwd: options.cwd?.() ?? process.cwd(),
          home: options.home?.() ?? io.env["HOME"] ?? homedir(),
          ...(options.retryBaseDelayMs !== undefined && { retryBaseDelayMs: options.retryBaseDelayMs }),
        });
      });
  };
}

/**
 * `ctxkit chat` on this process's stdin, working folder and home.
 *
 * @example
 * createProgram([registerChat], io);
 */
export const registerChat: CommandRegistration = chatCommand();
