import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** One program running in a detached tmux pane on a private tmux server: type into it, read its screen. */
export interface TmuxPane {
  /** Sends keys as tmux names them (`C-c`, `C-d`, `Enter`) or literal text with `literal`. */
  keys(...keys: string[]): Promise<void>;
  /** Types a line and presses Enter. */
  line(text: string): Promise<void>;
  /** The whole pane history, wrapped lines joined, without escape codes. */
  screen(): Promise<string>;
  /** Waits until the screen matches `pattern` (polling); throws with the screen after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Waits until `test(screen)` is true (polling); throws with the screen after `timeoutMs`. */
  waitUntil(what: string, test: (screen: string) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** Single-quotes a word for sh. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * Starts `command` (a sh command line) in a new 200×50 tmux session on a private server socket in `cwd`, so tests never
 * touch the user's tmux. The pane stays open after the command ends.
 */
export async function startTmux(command: string, options: { cwd: string; name: string }): Promise<TmuxPane> {
  // The socket lives in the test's own folder, so it goes when the folder does.
  const socket = join(options.cwd, `tmux-${options.name}.sock`);
  const tmux = (...args: string[]) => run("tmux", ["-S", socket, ...args], { cwd: options.cwd });
  await tmux(
    "-f",
    "/dev/null",
    "new-session",
    "-d",
    "-s",
    "t",
    "-x",
    "200",
    "-y",
    "50",
    "-c",
    options.cwd,
    command,
  );
  await tmux("set-option", "-t", "t", "remain-on-exit", "on");
  await tmux("set-option", "-t", "t", "history-limit", "10000");
  const screen = async () => (await tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "t")).stdout;
  const waitUntil = async (what: string, test: (text: string) => boolean, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const text = await screen();
      if (test(text)) return;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; the screen:\n${text}`);
      await sleep(100);
    }
  };
  const close = async () => {
    await tmux("kill-server").catch(() => undefined);
  };
  return {
    keys: async (...keys) => {
      await tmux("send-keys", "-t", "t", ...keys);
    },
    line: async (text) => {
      await tmux("send-keys", "-t", "t", "-l", text);
      await tmux("send-keys", "-t", "t", "Enter");
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
