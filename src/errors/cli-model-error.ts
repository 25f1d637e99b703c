import { CtxkitError, type CtxkitErrorOptions } from "./ctxkit-error.ts";

/**
 * Why a CLI-backed model call failed: the command could not start (`spawn`), ran past its time limit
 * (`timeout`), exited with a non-zero code or a signal (`exit`), printed something that is not a usable
 * reply (`output`), or was aborted by the caller (`aborted`).
 */
export type CliModelFailure = "spawn" | "timeout" | "exit" | "output" | "aborted";

/** The facts behind a CLI model failure. `stderrTail` is trimmed and has secret-looking values redacted. */
export interface CliModelErrorDetails extends CtxkitErrorOptions {
  readonly command: string;
  readonly exitCode?: number | null;
  readonly signal?: string | null;
  readonly stderrTail?: string;
}

/**
 * A model that runs a command-line program (`claude -p`, `gemini -p`, a script) failed. Code `cli_model_error`;
 * `failure` says which way, and the message says what to do.
 *
 * @example
 * ```ts
 * try { await generateText({ model: new CliModel({ command: "claude", args: ["-p"] }), prompt: "hi" }); }
 * catch (error) { if (error instanceof CliModelError && error.failure === "timeout") retryLater(); }
 * ```
 */
export class CliModelError extends CtxkitError {
  readonly failure: CliModelFailure;
  readonly command: string;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stderrTail: string;

  constructor(failure: CliModelFailure, message: string, details: CliModelErrorDetails) {
    super("cli_model_error", message, details);
    this.failure = failure;
    this.command = details.command;
    this.exitCode = details.exitCode ?? null;
    this.signal = details.signal ?? null;
    this.stderrTail = details.stderrTail ?? "";
  }
}
