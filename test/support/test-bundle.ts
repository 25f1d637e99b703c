/**
 * vitest `globalSetup`: bundles the programs the tests start as child processes — the `ctxkit` CLI as
 * `npm run build` bundles it (scripts/bundle-cli.ts; here with the peer dependencies inlined too), and the
 * store crash and concurrency workers — from the current source, once per run, into one folder. The tests start them by the hundred (`ctxkit serve` ~60 times,
 * crash workers 130 times), and an unbundled start spends most of its CPU in Node's module loader.
 *
 * The folder is inside this checkout (node_modules/.cache), where the bundles find the package root and the peer
 * dependencies; its path is handed to the test files in `CTXKIT_TEST_BUNDLE` (see `bundled()`).
 */
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { bundleCli } from "../../scripts/bundle-cli.ts";
import { processIsGone } from "../../src/server/auth/file-lock.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

export default async function setup(): Promise<() => void> {
  const cache = join(root, "node_modules", ".cache", "ctxkit");
  mkdirSync(cache, { recursive: true });
  // Folders of runs that were killed before their teardown.
  for (const name of readdirSync(cache).filter((name) => name.startsWith("test-bundle-")))
    if (processIsGone(Number(name.slice("test-bundle-".length))))
      rmSync(join(cache, name), { recursive: true, force: true });
  const folder = join(cache, `test-bundle-${process.pid}`);
  await bundleCli(folder, {
    inlinePeers: true,
    entries: {
      "crash-worker": "test/store/workers/crash-worker.ts",
      "concurrent-worker": "test/store/workers/concurrent-worker.ts",
    },
  });
  process.env["CTXKIT_TEST_BUNDLE"] = folder;
  return () => rmSync(folder, { recursive: true, force: true });
}
