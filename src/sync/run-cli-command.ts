import { spawn } from "node:child_process";
import { basename } from "node:path";
import { CliModelError, type CliModelFailure } from "../errors/cli-model-error.ts";
import { redactSecrets } from "../errors/redact-secrets.ts";

/** One run of a command: the prompt goes to stdin, stdout is the reply. */
export interface CliCommandSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly input: string;
  readonly timeoutMs: number;
  readonly maxOutputBytes: number;
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly signal?: AbortSignal;
  /** Called with stdout as it arrives (decoded text). */
  readonly onStdout?: (text: string) => void;
}

/** What a successful run printed. */
export interface CliCommandOutput {
  readonly stdout: string;
  readonly stderr: string;
}

const STDERR_KEEP_BYTES = 64 * 1024;
const STDERR_TAIL_CHARS = 600;
const KILL_GRACE_MS = 2_000;

/** The last lines of stderr, secrets redacted, for an error message. */
export function stderrTail(stderr: string, env: Readonly<Record<string, string | undefined>> = {}): string {
  const redacted = redactSecrets(stderr, { env, unknownTokens: true }).trim();
  return redacted.length <= STDERR_TAIL_CHARS ? redacted : `…${redacted.slice(-STDERR_TAIL_CHARS)}`;
}

/**
 * Runs a command once — no shell, the input on stdin — and resolves with its output. Failing to start, running
 * past `timeoutMs`, printing more than `maxOutputBytes`, exiting non-zero or being aborted reject with a
 * `CliModelError` (the abort signal's reason is passed through when it is an error).
 *
 * @example
 * const { stdout } = await runCliCommand({ command: "claude", args: ["-p"], input: prompt, timeoutMs: 120_000, maxOutputBytes: 1e7 });
 */
export function runCliCommand(spec: CliCommandSpec): Promise<CliCommandOutput> {
  const name = basename(spec.command);
  const env = spec.env ?? process.env;
  return new Promise((resolve, reject) => {
    const fail = (failure: CliModelFailure, message: string, stderr: string, extra: object = {}) =>
      new CliModelError(failure, message, { command: name, stderrTail: stderrTail(stderr, env), ...extra });
    if (spec.signal?.aborted) {
      reject(abortReason(spec.signal, fail));
      return;
    }
    const child = spawn(spec.command, [...spec.args], {
      cwd: spec.cwd,
      env,
      stdio: ["pipe", "pipe", "pipe"],
      shell: false,
      windowsHide: true,
    });
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = "";
    let failure: Error | undefined;
    let settled = false;
    const decoder = new TextDecoder();
    const stop = (error: Error) => {
      failure ??= error;
      child.kill("SIGTERM");
      setTimeout(() => child.kill("SIGKILL"), KILL_GRACE_MS).unref();
    };
    const timer = setTimeout(
      () =>
        stop(
          fail(
            "timeout",
            `"${name}" did not finish within ${spec.timeoutMs} ms and was stopped; raise timeoutMs or shorten the request`,
            stderr,
          ),
        ),
      spec.timeoutMs,
    );
    const onAbort = () => stop(abortReason(spec.signal!, fail));
    spec.signal?.addEventListener("abort", onAbort, { once: true });
    const settle = (action: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      spec.signal?.removeEventListener("abort", onAbort);
      action();
    };
    child.on("error", (error: NodeJS.ErrnoException) =>
      settle(() =>
        reject(
          new CliModelError(
            "spawn",
            `cannot start "${name}" (${error.code ?? error.message}); install it or fix the command path`,
            { command: name, cause: error },
          ),
        ),
      ),
    );
    child.stdout.on("data", (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes > spec.maxOutputBytes) {
        stop(
          fail(
            "output",
            `"${name}" printed more than ${spec.maxOutputBytes} bytes and was stopped; raise maxOutputBytes`,
            stderr,
          ),
        );
        return;
      }
      stdout.push(chunk);
      if (spec.onStdout && failure === undefined) spec.onStdout(decoder.decode(chunk, { stream: true }));
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-STDERR_KEEP_BYTES);
    });
    // A command that exits without reading its input makes the write fail with EPIPE; its exit code tells more.
    child.stdin.on("error", () => undefined);
    child.stdin.end(spec.input, "utf8");
    child.on("close", (exitCode, signal) =>
      settle(() => {
        if (failure) return reject(failure);
        if (exitCode !== 0) {
          const how = exitCode === null ? `was killed by ${signal}` : `exited with code ${exitCode}`;
          const tail = stderrTail(stderr, env);
          return reject(
            fail(
              "exit",
              `"${name}" ${how}${tail ? `: ${tail}` : ""}; run it by hand to check it is installed and logged in`,
              stderr,
              {
                exitCode,
                signal,
              },
            ),
          );
        }
        const rest = decoder.decode();
        if (rest !== "") spec.onStdout?.(rest);
        resolve({ stdout: Buffer.concat(stdout).toString("utf8"), stderr });
      }),
    );
  });
}

function abortReason(
  signal: AbortSignal,
  fail: (failure: CliModelFailure, message: string, stderr: string) => CliModelError,
): Error {
  return signal.reason instanceof Error
    ? signal.reason
    : fail("aborted", "the CLI model call was aborted by the caller", "");
}
