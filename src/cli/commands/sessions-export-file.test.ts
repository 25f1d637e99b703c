import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const folder = mkdtempSync(join(tmpdir(), "ctxkit-export-file-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
const module = fileURLToPath(new URL("./sessions-export-file.ts", import.meta.url));

describe("writeNewFile", () => {
  it.each(["SIGINT", "SIGTERM"] as const)(
    "leaves nothing behind when %s stops the process mid-write, and dies of that signal",
    async (signal) => {
      const output = join(folder, `${signal}.jsonl`);
      // A writer that writes one chunk, says so, and then waits (a long export).
      const script = `
        const { writeNewFile } = await import(${JSON.stringify(module)});
        await writeNewFile(${JSON.stringify(output)}, async (write) => {
          await write("first line\\n");
          process.stdout.write("writing\\n");
          await new Promise(() => setInterval(() => {}, 1000));
        });`;
      const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "pipe" });
      await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
      expect(readdirSync(folder).some((name) => name.endsWith(".tmp"))).toBe(true);
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        child.once("exit", (_, how) => resolve(how)),
      );
      child.kill(signal);
      expect(await exited).toBe(signal);
      expect(readdirSync(folder).filter((name) => name.endsWith(".tmp"))).toEqual([]);
      expect(existsSync(output)).toBe(false);
    },
  );
});
