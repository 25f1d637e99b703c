// Runs the ctxkit CLI on this process's arguments, then prints the process's peak resident memory as its last
// line: `peak-rss-kib <n>` (the memory tests compare it between a huge and a tiny input).
import { runCli } from "../../../src/cli/main.ts";

const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
});
process.stdout.write(`peak-rss-kib ${process.resourceUsage().maxRSS}\n`);
process.exitCode = code;
