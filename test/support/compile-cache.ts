/**
 * vitest `globalSetup`: every Node process the tests start (the CLI, store workers, crash workers) inherits
 * NODE_COMPILE_CACHE, so each compiles the project's modules and dependencies once per run instead of once per
 * process: most tests that spawn the real CLI spend their time starting it. One folder per user, who must write it.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";

export default function setup(): void {
  process.env["NODE_COMPILE_CACHE"] ??= join(
    tmpdir(),
    `ctxkit-node-compile-cache-${process.getuid?.() ?? "user"}`,
  );
}
