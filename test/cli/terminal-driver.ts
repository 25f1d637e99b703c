import { spawn } from "node:child_process";
import { once } from "node:events";
import xterm from "@xterm/headless";

/** One program running in a real pseudo-terminal: type into it, read its screen. */
export interface TerminalPane {
  /** Sends keys named as tmux names them (`C-c`, `C-d`, `Enter`, `Tab`, `Escape`); other words are typed as is. */
  keys(...keys: string[]): Promise<void>;
  /** Types a line and presses Enter. */
  line(text: string): Promise<void>;
  /** The whole screen and its scrollback, wrapped lines joined, without escape codes. */
  screen(): Promise<string>;
  /** Waits until the screen matches `pattern` (polling); throws with the screen after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Waits until `test(screen)` is true (polling); throws with the screen after `timeoutMs`. */
  waitUntil(what: string, test: (screen: string) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const COLUMNS = 200;
const ROWS = 50;

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** Single-quotes a word for sh. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The bytes a terminal sends for a key named as tmux names it. */
function keyBytes(key: string): string {
  const control = /^C-([a-z])$/.exec(key);
  if (control) return String.fromCharCode(control[1]!.charCodeAt(0) - 96);
  const named: Record<string, string> = { Enter: "\r", Tab: "\t", Escape: "\x1b", BSpace: "\x7f" };
  return named[key] ?? key;
}

/**
 * Starts `command` (a sh command line) in a new 200×50 pseudo-terminal in `cwd`. The terminal is util-linux's
 * `script` (in every Debian, as part of the essential bsdutils package), which gives the command a real TTY with job
 * control, so Ctrl-C raises SIGINT and Ctrl-D ends input as at a keyboard; its output is rendered by xterm.js'
 * headless terminal, so the screen reads as a person would see it. The screen stays readable after the command ends.
 */
export async function startTerminal(
  command: string,
  options: { cwd: string; name: string },
): Promise<TerminalPane> {
  const terminal = new xterm.Terminal({
    cols: COLUMNS,
    rows: ROWS,
    scrollback: 10_000,
    allowProposedApi: true,
  });
  const child = spawn(
    "script",
    [
      "--quiet",
      "--flush",
      "--return",
      "--command",
      `stty cols ${COLUMNS} rows ${ROWS} && ${command}`,
      "/dev/null",
    ],
    { cwd: options.cwd, env: { ...process.env, SHELL: "/bin/sh" }, stdio: ["pipe", "pipe", "pipe"] },
  );
  let failure = "";
  child.stdout.on("data", (chunk: Buffer) => terminal.write(chunk));
  child.stderr.on("data", (chunk: Buffer) => (failure += chunk.toString()));
  child.stdin.on("error", () => undefined); // typing into a terminal whose program has ended
  const exited = once(child, "exit");
  await once(child, "spawn");

  const screen = async () => {
    await new Promise<void>((resolve) => terminal.write("", resolve)); // everything received is rendered
    const buffer = terminal.buffer.active;
    const lines: string[] = [];
    for (let row = 0; row < buffer.length; row++) {
      const line = buffer.getLine(row);
      if (line === undefined) continue;
      const text = line.translateToString(true);
      if (line.isWrapped && lines.length > 0) lines[lines.length - 1] += text;
      else lines.push(text);
    }
    while (lines.length > 0 && lines.at(-1) === "") lines.pop();
    return `${lines.join("\n")}\n`;
  };
  const waitUntil = async (what: string, test: (text: string) => boolean, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const text = await screen();
      if (test(text)) return;
      if (Date.now() > deadline) {
        const status =
          child.exitCode === null
            ? ""
            : ` (the terminal exited with ${child.exitCode}${failure && `: ${failure}`})`;
        throw new Error(
          `timed out waiting for ${what} in terminal "${options.name}"${status}; the screen:\n${text}`,
        );
      }
      await sleep(100);
    }
  };
  const type = async (bytes: string) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => child.stdin.write(bytes, () => resolve()));
  };
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM"); // script hangs up the terminal, which ends the program in it
      const killer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(killer);
    }
    terminal.dispose();
  };
  return {
    keys: async (...keys) => {
      for (const key of keys) await type(keyBytes(key));
    },
    line: async (text) => {
      await type(text);
      await type("\r");
    },
    screen,
    waitFor: async (pattern, timeoutMs = 20_000) => {
      let match: RegExpMatchArray | null = null;
      await waitUntil(String(pattern), (text) => (match = pattern.exec(text)) !== null, timeoutMs);
      return match!;
    },
    waitUntil,
    close,
    [Symbol.asyncDispose]: close,
  };
}
