#!/usr/bin/env node
// Runs the built CLI (one bundle: dist/cli-bundle, see scripts/bundle-cli.ts); in a source checkout without a
// build, runs the TypeScript source directly (Node >= 22.18).
// The Node version is checked before anything is imported: older Nodes lack node:sqlite and would die with a stack
// trace on the first import.
const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 13)) {
  process.stderr.write(
    `ctxkit needs Node ≥ 22.13 (found ${process.versions.node}): install Node 22.13 or newer ` +
      `(in a ctxkit checkout, npm run ctxkit -- <command> runs it with the project's own Node)\n`,
  );
  process.exit(2);
}
const { existsSync } = await import("node:fs");
const built = new URL("../dist/cli-bundle/ctxkit.js", import.meta.url);
const source = new URL("../src/cli/bin.ts", import.meta.url);
await import(existsSync(built) ? built.href : source.href);
