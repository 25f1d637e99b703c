/**
 * Bundles the `ctxkit` CLI (src/cli/bin.ts) with rolldown into `outDir`: `ctxkit.js` and the chunks it loads on
 * demand (each command still loads only what it runs), with the SQLite writer thread's script
 * (`sqlite-writer-worker.js`) beside them, where the store looks for it. A start then reads a few files instead
 * of ~900 modules: `ctxkit serve` is listening after ~0.4 s of CPU instead of ~1.2 s.
 *
 * The package's dependencies (and theirs) are bundled; its peer dependencies (zod, the AI SDK, pg,
 * gpt-tokenizer, …) stay imports, resolved where the user installed them, as the library resolves them; so do
 * optional packages a dependency loads only when present (ws's bufferutil). `npm run build` writes
 * dist/cli-bundle (what bin/ctxkit.js runs); the tests bundle the same way from the current source
 * (test/support/test-bundle.ts).
 *
 * @example
 * await bundleCli("dist/cli-bundle");
 */
import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

const root = fileURLToPath(new URL("../", import.meta.url));
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  peerDependencies: Record<string, string>;
};
const peers = new Set(Object.keys(manifest.peerDependencies));

/** The package a bare import names (`@scope/name/sub` → `@scope/name`), or undefined for a path. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith(".") || specifier.startsWith("/") || specifier.startsWith("node:"))
    return undefined;
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** Options of `bundleCli`. */
export interface BundleCliOptions {
  /** More programs to bundle beside the CLI, by output name (without `.js`) → source path from the root. */
  readonly entries?: Readonly<Record<string, string>>;
  /**
   * Bundle the peer dependencies too (the tests: every start then loads a few files, ~0.4 s of CPU for
   * `ctxkit serve` against ~0.7 s with the peers imported).
   */
  readonly inlinePeers?: boolean;
}

/** Bundles the CLI into `outDir` (see the module comment). */
export async function bundleCli(outDir: string, options: BundleCliOptions = {}): Promise<void> {
  const entries: Record<string, string> = {
    ctxkit: "src/cli/bin.ts",
    "sqlite-writer-worker": "src/store/sqlite/sqlite-writer-worker.ts",
    "count-worker": "src/tokens/count-worker.ts",
    ...options.entries,
  };
  await build({
    input: Object.fromEntries(Object.entries(entries).map(([name, path]) => [name, join(root, path)])),
    platform: "node",
    external: (specifier) => {
      if (specifier.startsWith("node:") || builtinModules.includes(specifier)) return true;
      const name = packageOf(specifier);
      return name !== undefined && options.inlinePeers !== true && peers.has(name);
    },
    onLog: (level, log, handler) => {
      if (log.code !== "UNRESOLVED_IMPORT") handler(level, log);
    },
    output: { dir: resolve(outDir), format: "esm", cleanDir: true },
  });
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await bundleCli(process.argv[2] ?? join(root, "dist", "cli-bundle"));
}
