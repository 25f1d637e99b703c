import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openSqliteSessionStore } from "../../store/sqlite/index.ts";
import { runCli } from "../main.ts";

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
      expect(story).toContain("ctxkit serve");
      const sessionId = /as (ses_\w+)\./.exec(story)?.[1];
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
