// The executable entry of `ctxkit`: runs the CLI on this process's arguments and streams.
import { runCli } from "./main.ts";

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
});
