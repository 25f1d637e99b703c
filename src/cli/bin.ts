// The executable entry of `ctxkit`: runs the CLI on this process's arguments and streams.
import { runCli } from "./main.ts";

// A reader that stops early (`ctxkit --help | head -1`) closes the pipe: stop quietly, as the shell's own tools
// do, instead of dying on the unhandled EPIPE with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    process.exit(process.exitCode ?? 0);
  });
}

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
});
