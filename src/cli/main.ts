import { CommanderError } from "commander";
import { describeError, exitCodeFor } from "./exit-codes.ts";
import { createProgram, type CliIo } from "./program.ts";
import { commands } from "./commands/index.ts";

/** Runs the CLI with `argv` and returns the exit code (never throws, never prints a stack trace). */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const program = createProgram(commands, io);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    io.stderr.write(`${describeError(error, io.env)}\n`);
    return exitCodeFor(error);
  }
}
