/**
 * vitest `globalSetup`: bundles the programs the tests start as child processes (the `ctxkit` CLI, the store crash
 * and concurrency workers) from the current source, once per run, into one folder (each program a few files
 * instead of ~900 modules). The tests start them by the hundred (`ctxkit serve` alone ~60 times, crash workers
 * 130 times), and an unbundled start spends most of its CPU in Node's module loader: ~1.2 s of CPU for a
 * `ctxkit serve` start against ~0.4 s bundled, on a machine where the tests are CPU-bound.
 *
 * The folder is inside this checkout (node_modules/.cache), where the code's package-root lookups find the
 * package; its path is handed to the test files in `CTXKIT_TEST_BUNDLE` (see `bundled()`).
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** The programs, by the name `bundled()` takes. */
const entries = {
  bin: "src/cli/bin.ts",
  // The SQLite writer thread: its client loads `sqlite-writer-worker.js` beside itself (chunks share one folder).
  "sqlite-writer-worker": "src/store/sqlite/sqlite-writer-worker.ts",
  "crash-worker": "test/store/workers/crash-worker.ts",
  "concurrent-worker": "test/store/workers/concurrent-worker.ts",
};

export default async function setup(): Promise<() => void> {
  const folder = join(root, "node_modules", ".cache", "ctxkit", `test-bundle-${process.pid}`);
  mkdirSync(folder, { recursive: true });
  await build({
    input: Object.fromEntries(Object.entries(entries).map(([name, path]) => [name, join(root, path)])),
    platform: "node",
    // Optional dependencies the code or its dependencies load when present (pg-native, bufferutil, …) stay
    // imports, resolved at run time as in the source.
    onLog: (level, log, handler) => {
      if (log.code !== "UNRESOLVED_IMPORT") handler(level, log);
    },
    output: { dir: folder, format: "esm", sourcemap: true },
  });
  process.env["CTXKIT_TEST_BUNDLE"] = folder;
  return () => rmSync(folder, { recursive: true, force: true });
}
