import { redactSecrets } from "../../errors/redact-secrets.ts";
import type { GovernanceEvent } from "../../governance/events.ts";
import type { JsonValue, Usage } from "../../model/message.ts";
import type { CliIo } from "../program.ts";

/** What `ctxkit chat --json` prints, one event per line; the text mode renders the same events. */
export type ChatEvent =
  | {
      readonly type: "ready";
      readonly sessionId: string;
      readonly resumed: boolean;
      readonly turns: number;
      readonly model: string;
      readonly store: string;
    }
  | { readonly type: "delta"; readonly text: string }
  | {
      readonly type: "reply";
      readonly sessionId: string;
      readonly text: string;
      readonly usage: Usage | null;
    }
  | { readonly type: "governance"; readonly event: GovernanceEvent }
  | { readonly type: "retry"; readonly retry: number; readonly delayMs: number; readonly message: string }
  | { readonly type: "interrupted"; readonly sessionId: string; readonly removed: number }
  | { readonly type: "command"; readonly name: string; readonly text: string; readonly data: JsonValue }
  | { readonly type: "error"; readonly code: string; readonly message: string }
  | { readonly type: "exit"; readonly sessionId: string; readonly saved: boolean };

/** Where chat events go: a terminal (colours when allowed), a pipe (plain text), or a JSON-lines stream. */
export interface ChatOutput {
  /** True when a person is typing at a terminal: prompts and colours are shown. */
  readonly interactive: boolean;
  readonly json: boolean;
  emit(event: ChatEvent): void;
  /** Text for the prompt (empty when not interactive). */
  prompt(): string;
}

/** True when NO_COLOR is absent (or empty), the terminal is not `dumb`, and the stream is a TTY. */
export function colorsAllowed(io: Pick<CliIo, "env">, stream: { isTTY?: boolean }): boolean {
  const noColor = io.env["NO_COLOR"];
  if (noColor !== undefined && noColor !== "") return false;
  if (io.env["TERM"] === "dumb") return false;
  return stream.isTTY === true;
}

function paint(enabled: boolean) {
  const wrap = (code: string) => (text: string) => (enabled ? `\u001B[${code}m${text}\u001B[0m` : text);
  return { dim: wrap("2"), bold: wrap("1"), cyan: wrap("36"), red: wrap("31"), yellow: wrap("33") };
}

function formatNumber(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

function describeGovernance(event: GovernanceEvent): string {
  const tokens = `${formatNumber(event.tokensBefore)} → ${formatNumber(event.tokensAfter)} tokens`;
  switch (event.type) {
    case "compaction-end":
      return `compacted the history (${tokens}, summary by ${event.summarizer})`;
    case "compaction-rolled-back":
      return `compaction rolled back: ${event.reason}`;
    case "summarizer-failed":
      return `the summarizer failed (${event.reason}); ${event.fallback === "marker" ? "a marker stands in for the summary" : "nothing was summarised"}`;
    case "turns-trimmed":
      return `trimmed ${event.turns} old turns (${tokens})`;
    case "emergency-recovery":
      return event.stage === "trimmed"
        ? `the model refused the context as too long: kept the last 5 turns and asked again (${tokens})`
        : "the model still refused the context as too long: cleared it down to your message and asked again " +
            "(the stored history is kept)";
    case "checkpoint-skipped":
    case "compaction-start":
      return "";
    default:
      return `${event.type.replaceAll("-", " ")} (${tokens})`;
  }
}

/** Options of `createChatOutput`. */
export interface ChatOutputOptions {
  readonly json: boolean;
  readonly interactive: boolean;
  /**
   * The options of this run that a resume needs too (`--db <file>`, `--pg <url>`, `--model <spec>`), shown in
   * the resume hint (shell-quoted; a URL's password redacted).
   */
  readonly resumeArguments?: readonly string[];
}

/** `value` as one shell word: unchanged when it has nothing a shell treats specially, else single-quoted. */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * Builds the chat's output for these streams: `--json` writes every event as one JSON line on stdout; otherwise
 * replies stream as plain text, notices are dimmed (no escape codes when NO_COLOR is set or stdout is not a
 * terminal), and errors go to stderr as one `ctxkit: …` line.
 *
 * @example
 * const output = createChatOutput(io, { json: false, interactive: true });
 * output.emit({ type: "delta", text: "Hel" });
 */
export function createChatOutput(io: CliIo, options: ChatOutputOptions): ChatOutput {
  const resumeTail = (options.resumeArguments ?? []).map((argument) => ` ${shellWord(argument)}`).join("");
  const colors = paint(!options.json && colorsAllowed(io, io.stdout));
  const errorColors = paint(!options.json && colorsAllowed(io, io.stderr));
  let midLine = false;
  const out = (text: string) => {
    io.stdout.write(text);
    if (text.length > 0) midLine = !text.endsWith("\n");
  };
  const line = (text: string) => {
    if (midLine) out("\n");
    out(`${text}\n`);
  };
  const renderText = (event: ChatEvent): void => {
    switch (event.type) {
      case "ready": {
        const state = event.resumed ? `resumed, ${event.turns} turns` : "new";
        line(
          colors.dim(
            `ctxkit chat · ${event.model} · session ${event.sessionId} (${state}) · ${event.store}` +
              (options.interactive ? " · /help for commands, Ctrl-D to exit" : ""),
          ),
        );
        return;
      }
      case "delta":
        return out(event.text);
      case "reply":
        if (midLine) out("\n");
        return;
      case "governance": {
        const text = describeGovernance(event.event);
        if (text !== "") line(colors.dim(`· ${text}`));
        return;
      }
      case "retry":
        return line(
          colors.yellow(`· ${event.message}; retry ${event.retry} in ${Math.ceil(event.delayMs)} ms`),
        );
      case "interrupted":
        return line(colors.yellow("· interrupted; the turn was removed"));
      case "command":
        return event.text === "" ? undefined : line(event.text);
      case "error":
        if (midLine) out("\n");
        io.stderr.write(`${errorColors.red(`ctxkit: ${event.message}`)}\n`);
        return;
      case "exit":
        return line(
          colors.dim(
            event.saved
              ? `session ${event.sessionId} saved; resume with: ctxkit chat --resume ${shellWord(event.sessionId)}${resumeTail}`
              : "nothing to save",
          ),
        );
    }
  };
  return {
    interactive: options.interactive,
    json: options.json,
    emit(original) {
      // Errors quote what providers and stores said, which can include a key; nothing printed keeps one.
      const event =
        original.type === "error" || original.type === "retry"
          ? { ...original, message: redactSecrets(original.message, { env: io.env }) }
          : original;
      if (options.json) io.stdout.write(`${JSON.stringify(event)}\n`);
      else renderText(event);
    },
    prompt: () => (options.interactive && !options.json ? colors.bold(colors.cyan("> ")) : ""),
  };
}
