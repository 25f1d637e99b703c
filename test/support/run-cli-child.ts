// Runs the real `ctxkit` entry (src/cli/bin.ts, bundled for the run: test/support/test-bundle.ts) in a child process: for what an in-process run cannot show —
// another user (permissions do not stop root), a command that might never return (it is killed).
import { execFile } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundled } from "./bundled.ts";

/** How a child run ended. */
export interface ChildOutcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** True when it ran past its time limit and was killed. */
  readonly killed: boolean;
}

/** True when this process runs as root, where file permissions are not enforced. */
export const runsAsRoot = process.getuid?.() === 0;

/**
 * Runs `ctxkit <argv>` with `HOME` set to `home`, as the unprivileged `nobody` when this process is root
 * (folders it must reach need mode 0755 or wider); killed after `timeoutMs` (default 50 s: a CLI start on a busy 2-core machine can take many seconds; the test timeout is 60 s).
 *
 * @example
 * const { code, stderr } = await runCliChild(["sessions", "list", "--db", db], { home });
 */
export function runCliChild(
  argv: readonly string[],
  options: { readonly home: string; readonly timeoutMs?: number },
): Promise<ChildOutcome> {
  const asUser = runsAsRoot ? { uid: 65534, gid: 65534 } : {};
  // The compile cache makes each child start in a fraction of the time; one per user, who must write it.
  const cache = join(tmpdir(), `ctxkit-node-compile-cache-${asUser.uid ?? process.getuid?.() ?? "user"}`);
  const env = { HOME: options.home, PATH: process.env["PATH"] ?? "", NODE_COMPILE_CACHE: cache };
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bundled("ctxkit"), ...argv],
      { ...asUser, env, timeout: options.timeoutMs ?? 50_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1;
        resolve({ code, stdout, stderr, killed: error?.killed === true });
      },
    );
  });
}
