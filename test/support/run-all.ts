/**
 * `npm test`: the typecheck, the lint, the layering check (dependency-cruiser), the package check (test/support/check-package.ts: the packed package as a
 * consumer meets it; it reads the `dist/` that `npm install` built) and every test, at once. The tests run in the foreground with their own
 * output; the checks run beside them (they fill the time the tests spend waiting on child processes, PostgreSQL
 * and the browser) and report when the tests are done. Exits non-zero if anything failed.
 *
 * The checks keep caches in node_modules/.cache/ctxkit, so a second run only redoes what changed: tsc's
 * incremental build info and Prettier's per-file cache. The lint (oxlint, with the typed rules of
 * typescript-eslint's recommended set run by tsgolint on TypeScript 7) has no cache: a cold run takes seconds.
 *
 * Arguments go to vitest: `npm test -- src/store` runs the checks and the store tests.
 */
import { spawn } from "node:child_process";
import { setPriority } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const bin = (tool: string) => join(root, "node_modules", ".bin", tool);
const cache = join(root, "node_modules", ".cache", "ctxkit");

/**
 * The typechecks run TypeScript 7 (the native compiler, the `typescript-7` alias): the same checks at a fraction
 * of the CPU. TypeScript 5.9 (`typescript`) still builds the package and serves API Extractor, which needs its
 * JavaScript API.
 */
const tsc7 = join(root, "node_modules", "typescript-7", "bin", "tsc");

const checks: { name: string; tool: string; args: string[]; background?: false }[] = [
  {
    name: "typecheck",
    tool: "node",
    args: [
      tsc7,
      "-p",
      "tsconfig.json",
      "--noEmit",
      "--incremental",
      "--tsBuildInfoFile",
      join(cache, "tsc.tsbuildinfo"),
    ],
  },
  {
    name: "typecheck web",
    tool: "node",
    args: [
      tsc7,
      "-p",
      "web/tsconfig.json",
      "--incremental",
      "--tsBuildInfoFile",
      join(cache, "tsc-web.tsbuildinfo"),
    ],
  },
  {
    name: "lint",
    tool: "oxlint",
    args: ["--type-aware", "--deny-warnings"],
  },
  // The longest chain of steps (pack, publint, attw, API Extractor, a consumer's compile, the packed CLI): at the
  // tests' priority, so it is not the last thing left running when the tests are done.
  { name: "package", tool: "node", args: ["test/support/check-package.ts"], background: false },
  // The layering of docs/ARCHITECTURE.md (.dependency-cruiser.js): no folder imports a layer above its own.
  {
    name: "layers",
    tool: "depcruise",
    args: ["src", "--config", ".dependency-cruiser.js", "--output-type", "err"],
  },
  {
    name: "prettier",
    tool: "prettier",
    args: ["--check", ".", "--cache", "--cache-location", join(cache, "prettier")],
  },
];

/**
 * Runs `tool args`; resolves with its exit code and, unless `inherit`, everything it printed. `background` runs it
 * at a lower CPU priority (its children too): the checks take the CPU the tests leave, so the tests — the longer
 * part — are not slowed by them on a machine with few cores.
 */
function run(tool: string, args: string[], options: { inherit: boolean; background?: boolean }) {
  const started = performance.now();
  const child = spawn(bin(tool), args, { cwd: root, stdio: options.inherit ? "inherit" : "pipe" });
  if (options.background === true && child.pid !== undefined) {
    try {
      setPriority(child.pid, 10);
    } catch {
      // Not permitted here: the check runs at normal priority.
    }
  }
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return new Promise<{ code: number; output: string; seconds: number }>((resolve) => {
    child.once("error", (error) => resolve({ code: 1, output: String(error), seconds: 0 }));
    child.once("close", (code, signal) =>
      resolve({ code: code ?? (signal ? 1 : 0), output, seconds: (performance.now() - started) / 1000 }),
    );
  });
}

const pending = checks.map(async (check) => ({
  ...check,
  ...(await run(check.tool, check.args, { inherit: false, background: check.background ?? true })),
}));
const tests = await run("vitest", ["run", ...process.argv.slice(2)], { inherit: true });
let failed = tests.code !== 0;
for (const check of await Promise.all(pending)) {
  if (check.code === 0) {
    process.stdout.write(`✓ ${check.name} (${check.seconds.toFixed(1)} s)\n`);
  } else {
    failed = true;
    process.stdout.write(`${check.output.trimEnd()}\n✗ ${check.name} failed (exit ${check.code})\n`);
  }
}
process.exitCode = failed ? 1 : 0;
