// The CLI starts fast: parsing arguments and printing help loads no server, engine or model provider; each
// command loads what it needs when it runs.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const main = new URL("../../src/cli/main.ts", import.meta.url).href;
const home = mkdtempSync(join(tmpdir(), "ctxkit-startup-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** Modules only a running command needs: the HTTP server, the engine, the governor (its settings schema is a light zod module the config commands validate with), model providers, tokenizers. */
const HEAVY =
  /\/src\/(server\/(create|start)-server|engine\/|governance\/governor(?!-settings)|replay\/)|\/node_modules\/(ai|@ai-sdk\/[^/]+|hono|pg|gpt-tokenizer)\//;

/** Runs the CLI with `args` in a child that records every module it loads; returns their URLs. */
function modulesLoadedBy(args: readonly string[], expectedCode = 0): string[] {
  const script = `
    import { registerHooks } from "node:module";
    const loaded = [];
    registerHooks({ resolve(specifier, context, next) { const found = next(specifier, context); loaded.push(found.url); return found; } });
    const { runCli } = await import(${JSON.stringify(main)});
    const quiet = { write: () => true };
    const code = await runCli(${JSON.stringify(args)}, { stdout: quiet, stderr: quiet, env: { HOME: ${JSON.stringify(home)} } });
    process.stdout.write(JSON.stringify({ code, loaded }));
  `;
  const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
    timeout: 30_000,
    env: { PATH: process.env["PATH"], HOME: home },
  });
  expect(run.stderr).toBe("");
  const { code, loaded } = JSON.parse(run.stdout) as { code: number; loaded: string[] };
  expect(code).toBe(expectedCode);
  return loaded;
}

describe("ctxkit start-up", () => {
  it.each(["--help", "serve --help", "serve keys list", "replay --help", "demo --help"])(
    "`ctxkit %s` loads no server, engine, governance or model provider",
    (command) => {
      const loaded = modulesLoadedBy(command.split(" "));
      expect(loaded.some((url) => url.includes("/src/cli/program.ts"))).toBe(true);
      expect(loaded.filter((url) => HEAVY.test(url))).toEqual([]);
    },
  );

  it("a command loads its heavy modules when it runs", () => {
    // A usage error found by the command itself (exit 2): it ran, so it loaded what it needs.
    const loaded = modulesLoadedBy(["demo", "--temporary", "--window", "10"], 2);
    expect(loaded.some((url) => url.includes("/src/engine/"))).toBe(true);
  });
});
