import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { bundled } from "../../../test/support/bundled.ts";
import { DEMO_AGENT } from "../../demo/run-demo.ts";
import { DEMO_MIN_WINDOW } from "../../demo/demo-window.ts";
import { openSqliteSessionStore } from "../../store/sqlite/index.ts";
import { runCli } from "../main.ts";

/** Runs `ctxkit <argv>` in-process with a private home; returns the exit code and what it wrote. */
async function run(argv: readonly string[], home: string) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, {
    stdout: { write: (chunk: string) => out.push(chunk) !== 0 } as never,
    stderr: { write: (chunk: string) => err.push(chunk) !== 0 } as never,
    env: { HOME: home, XDG_CONFIG_HOME: join(home, "config") },
  });
  return { code, stdout: out.join(""), stderr: err.join("") };
}

async function withFolder(test: (folder: string) => Promise<void>): Promise<void> {
  const folder = await mkdtemp(join(tmpdir(), "ctxkit-demo-test-"));
  try {
    await test(folder);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

describe("ctxkit demo (the README's main job)", () => {
  it("runs offline through the engine and SQLite and tells the story with consistent figures", async () => {
    const dir = await mkdtemp(join(tmpdir(), "ctxkit-demo-test-"));
    const database = join(dir, "demo.db");
    try {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(["demo", "--db", database], {
        stdout: { write: (chunk: string) => out.push(chunk) !== 0 } as never,
        stderr: { write: (chunk: string) => err.push(chunk) !== 0 } as never,
        env: { HOME: dir, XDG_CONFIG_HOME: join(dir, "config") },
      });
      const story = out.join("");
      expect(err.join("")).toBe("");
      expect(code).toBe(0);
      const requests = Number(/(\d+) model requests/.exec(story)?.[1]);
      expect(requests).toBeGreaterThan(200);
      expect(story).toMatch(/with ctxkit none was over/);
      expect(story).toMatch(/Compaction 1 at request \d+/);
      const without = Number(/without ctxkit {2}([\d,]+)\n/.exec(story)?.[1]?.replaceAll(",", ""));
      const withCtxkit = Number(/with ctxkit {5}([\d,]+) {2}\(/.exec(story)?.[1]?.replaceAll(",", ""));
      expect(withCtxkit).toBeGreaterThan(0);
      expect(withCtxkit).toBeLessThan(without);
      // Run from this checkout, the hints use the command that works here.
      expect(story).toContain("npm run ctxkit -- serve --no-auth --db ");
      const sessionId = / as (ses_\w+)\./.exec(story)?.[1];
      const store = await openSqliteSessionStore({ path: database });
      try {
        const record = await store.getSession(sessionId!);
        expect(record?.turnCount).toBe(12);
        expect(record?.agent).toBe("ctxkit-demo");
        const visible = await store.loadMessages(sessionId!);
        const all = await store.loadMessages(sessionId!, { strategy: "all" });
        expect(visible.some((message) => message.kind === "summary")).toBe(true);
        expect(all.length).toBeGreaterThan(visible.length);
      } finally {
        await store.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("ctxkit demo: options and where the session goes", () => {
  it("refuses a window that is not a whole number or too small for the demo, with exit code 2", async () => {
    await withFolder(async (home) => {
      const minimum = DEMO_MIN_WINDOW.toLocaleString("en-US");
      for (const [window, message] of [
        ["abc", "--window must be a number of tokens"],
        ["1.5", "--window must be a whole number of tokens"],
        [
          "10",
          `--window must be at least ${minimum} tokens, the smallest window every step of the demo fits in`,
        ],
        [String(DEMO_MIN_WINDOW - 1), `--window must be at least ${minimum} tokens`],
      ]) {
        const result = await run(["demo", "--temporary", "--window", window!], home);
        expect(result.code, window).toBe(2);
        expect(result.stdout).toBe("");
        expect(result.stderr).toMatch(new RegExp(`^ctxkit: invalid demo options: window: ${message}`));
        expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
      }
      const both = await run(["demo", "--temporary", "--db", join(home, "x.db")], home);
      expect(both.code).toBe(2);
    });
  });

  it("runs to the end at the smallest window it accepts", async () => {
    await withFolder(async (home) => {
      const result = await run(["demo", "--temporary", "--window", String(DEMO_MIN_WINDOW)], home);
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/with ctxkit none was over/);
    });
  });

  it("keeps one demo session per database: a second run replaces the first and says so", async () => {
    await withFolder(async (home) => {
      const database = join(home, "user.db");
      const first = await run(["demo", "--db", database], home);
      expect(first.code).toBe(0);
      const firstId = / as (ses_\w+)\. Each run of the demo keeps only its newest session\./.exec(
        first.stdout,
      )?.[1];
      expect(firstId).toBeDefined();
      const second = await run(["demo", "--db", database], home);
      expect(second.code).toBe(0);
      const secondId = / as (ses_\w+); it replaces the earlier demo session there\./.exec(second.stdout)?.[1];
      expect(secondId).toBeDefined();
      expect(secondId).not.toBe(firstId);
      const store = await openSqliteSessionStore({ path: database });
      try {
        const demos = await store.listSessions({ agent: DEMO_AGENT });
        expect(demos.sessions.map((session) => session.id)).toEqual([secondId]);
      } finally {
        await store.close();
      }
    });
  });

  it("--temporary writes nothing to disk, also when interrupted with Ctrl-C", async () => {
    const root = fileURLToPath(new URL("../../../", import.meta.url));
    await withFolder(async (folder) => {
      const [homeDir, tempDir] = [join(folder, "home"), join(folder, "tmp")];
      await Promise.all([mkdir(homeDir), mkdir(tempDir)]);
      const runChild = (signalAfterMs?: number) =>
        new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }>((resolve) => {
          const child = spawn(
            join(root, "node_modules/.bin/node"),
            [bundled("ctxkit"), "demo", "--temporary"],
            {
              cwd: homeDir,
              env: { PATH: process.env["PATH"], HOME: homeDir, TMPDIR: tempDir },
            },
          );
          let stdout = "";
          child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
          if (signalAfterMs !== undefined) setTimeout(() => child.kill("SIGINT"), signalAfterMs);
          child.once("close", (code, signal) => resolve({ code, signal, stdout }));
        });
      const finished = await runChild();
      expect(finished.code).toBe(0);
      expect(finished.stdout).toMatch(/kept in memory only \(--temporary\) and is gone/);
      const interrupted = await runChild(1_000);
      expect(interrupted.code === 0 || interrupted.signal === "SIGINT" || interrupted.code === 130).toBe(
        true,
      );
      expect(await readdir(homeDir)).toEqual([]);
      expect(await readdir(tempDir)).toEqual([]);
    });
  });
});
