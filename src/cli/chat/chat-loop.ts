import { createInterface } from "node:readline";
import { CtxkitError } from "../../errors/ctxkit-error.ts";
import { ProviderError } from "../../errors/provider-errors.ts";
import type { CliIo } from "../program.ts";
import type { ChatRuntime } from "./chat-runtime.ts";
import { isSlashCommand, runSlashCommand } from "./slash-commands.ts";

/**
 * Errors retyping cannot fix (a rejected key, an unreachable server, a broken setting or store): the chat ends
 * on them even at a terminal. Every other failure is reported and the prompt comes back.
 */
function isFatal(error: unknown): boolean {
  if (error instanceof ProviderError) return error.kind === "auth" || error.kind === "network";
  if (!CtxkitError.isInstance(error)) return true;
  return ["config_error", "store_error", "corrupt_store", "schema_too_new", "file_access"].includes(
    error.code,
  );
}

/**
 * The `error` event for a failure, as `--json` prints it.
 *
 * @example
 * output.emit(errorEvent(new ConfigError("model", "no model configured")));
 */
export function errorEvent(error: unknown) {
  return {
    type: "error" as const,
    code: CtxkitError.isInstance(error) ? error.code : "internal",
    message: error instanceof Error ? error.message : String(error),
  };
}

/** A queue of input lines that a loop can await. */
function lineQueue() {
  const queued: string[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  return {
    push(line: string) {
      queued.push(line);
      notify();
    },
    end() {
      ended = true;
      notify();
    },
    /** The next line, or undefined once the input has ended and every line was taken. */
    async next(): Promise<string | undefined> {
      while (queued.length === 0 && !ended) await new Promise<void>((resolve) => (wake = resolve));
      return queued.shift();
    },
  };
}

/**
 * Reads the user's lines with node:readline and runs them as turns or slash commands until the input ends
 * (Ctrl-D), `/exit`, or Ctrl-C at the prompt. Ctrl-C during a reply interrupts that turn instead. Returns the
 * error that ended the chat, if one did: fatal errors always end it; without a terminal (scripts, `--json`)
 * any failure does.
 *
 * @example
 * const fatal = await runChatLoop(runtime, process.stdin, io);
 */
export async function runChatLoop(
  runtime: ChatRuntime,
  input: NodeJS.ReadableStream & { isTTY?: boolean },
  io: CliIo,
): Promise<Error | undefined> {
  const { output } = runtime;
  const terminal = output.interactive;
  const reader = createInterface({
    input,
    ...(terminal && { output: io.stdout }),
    terminal,
    prompt: output.prompt(),
  });
  const lines = lineQueue();
  let leaving = false;
  reader.on("line", (line) => lines.push(line));
  reader.on("close", () => lines.end());
  const onInterrupt = () => {
    if (runtime.interrupt() || runtime.busy) return;
    leaving = true;
    lines.end();
  };
  reader.on("SIGINT", onInterrupt);
  process.on("SIGINT", onInterrupt);
  try {
    for (;;) {
      if (terminal && !leaving) reader.prompt();
      const line = await lines.next();
      if (line === undefined || leaving) return undefined;
      const text = line.trim();
      if (text === "") continue;
      try {
        if (isSlashCommand(text)) {
          const result = await runSlashCommand(runtime, text);
          output.emit({ type: "command", name: result.name, text: result.text, data: result.data });
          if (result.exit === true) return undefined;
        } else {
          await runtime.send(line);
        }
      } catch (error) {
        if (isFatal(error) || !terminal) return error instanceof Error ? error : new Error(String(error));
        output.emit(errorEvent(error));
      }
    }
  } finally {
    process.off("SIGINT", onInterrupt);
    reader.close();
  }
}
