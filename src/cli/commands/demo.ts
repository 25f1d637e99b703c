import type { Command } from "commander";
import type { CliIo, CommandRegistration } from "../program.ts";
import { DEMO_MIN_WINDOW } from "../../demo/demo-window.ts";
import type { DemoFlags } from "./run-demo.ts";

/**
 * `ctxkit demo`: the offline demo — a scripted coding agent through the whole engine, told as a story. The
 * session stays in the database for `ctxkit serve` (each run replaces the previous demo session, so running it
 * again adds nothing); `--temporary` keeps it in memory only.
 *
 * @example
 * await runCli(["demo", "--temporary"], io);
 */
export const registerDemo: CommandRegistration = (program: Command, io: CliIo) => {
  program
    .command("demo")
    .description("run a realistic coding-agent session through ctxkit offline and show what governance did")
    .option(
      "--db <path>",
      "SQLite database to keep the demo session in (default: the configured one); it replaces the previous one",
    )
    .option("--temporary", "keep the session in memory only: nothing is written to disk")
    .option(
      "--window <tokens>",
      `context window of the simulated model (at least ${DEMO_MIN_WINDOW.toLocaleString("en-US")})`,
      "48000",
    )
    .action(async (flags: DemoFlags) => (await import("./run-demo.ts")).runDemoCommand(flags, io));
};
