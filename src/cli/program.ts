import { Command } from "commander";
import packageJson from "../../package.json" with { type: "json" };
import { exitCodesHelp } from "./exit-codes.ts";

/** The streams and environment a command writes to, so tests can capture them. */
export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

/** A CLI command module: adds itself to the program. */
export type CommandRegistration = (program: Command, io: CliIo) => void;

/**
 * Builds the `ctxkit` commander program with every command registered.
 *
 * @example
 * await createProgram([registerStats], io).parseAsync(["node", "ctxkit", "stats", "file.jsonl"]);
 */
export function createProgram(commands: readonly CommandRegistration[], io: CliIo): Command {
  const program = new Command("ctxkit")
    .description("the context engine for LLM agents: govern, persist and inspect conversation context")
    .version(packageJson.version)
    .showHelpAfterError()
    .addHelpText("afterAll", exitCodesHelp())
    // A command's options belong to the command they follow (inherited by every subcommand): `serve` and
    // `serve keys add` both have --keys, and without this `serve keys add --keys F` gave F to `serve`.
    .enablePositionalOptions()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .exitOverride();
  for (const register of commands) register(program, io);
  return program;
}
