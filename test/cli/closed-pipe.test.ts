// `ctxkit … | head -1`: the reader closes the pipe before ctxkit is done writing.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bundled } from "../support/bundled.ts";

const home = mkdtempSync(join(tmpdir(), "ctxkit-pipe-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe("ctxkit writing into a closed pipe", () => {
  it.each([["--help"], ["sessions", "list"]])(
    "`ctxkit %s` stops quietly with exit 0 when its reader is gone",
    async (...argv) => {
      const child = spawn(process.execPath, [bundled("ctxkit"), ...argv], {
        env: { PATH: process.env["PATH"], HOME: home },
        stdio: ["ignore", "pipe", "pipe"],
      });
      // The read end is closed before the child writes anything: its first write fails with EPIPE.
      child.stdout.destroy();
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
      expect(stderr).toBe("");
      expect(code).toBe(0);
    },
  );
});
