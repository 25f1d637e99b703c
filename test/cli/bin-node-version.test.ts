import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const bin = fileURLToPath(new URL("../../bin/ctxkit.js", import.meta.url));

/** Runs bin/ctxkit.js on this Node, reporting `version` as its version (as an older Node would). */
function runAs(version: string, ...args: string[]) {
  const pretend = `Object.defineProperty(process.versions, "node", { value: ${JSON.stringify(version)} });`;
  return spawnSync(
    process.execPath,
    ["--import", `data:text/javascript,${encodeURIComponent(pretend)}`, bin, ...args],
    { encoding: "utf8", timeout: 30_000 },
  );
}

describe("bin/ctxkit.js on an old Node", () => {
  it.each(["20.20.2", "22.12.0", "18.0.0"])(
    "Node %s: one line that says what to do and exit 2, no stack trace",
    (version) => {
      const run = runAs(version, "--help");
      expect(run.status).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr).toBe(
        `ctxkit needs Node ≥ 22.13 (found ${version}): install Node 22.13 or newer ` +
          `(in a ctxkit checkout, npm run ctxkit -- <command> runs it with the project's own Node)\n`,
      );
    },
  );

  it("Node 22.13 and newer get the CLI", () => {
    for (const version of ["22.13.0", "23.0.0", process.versions.node]) {
      const run = runAs(version, "--version");
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
      expect(run.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    }
  });
});
