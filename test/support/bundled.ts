/**
 * The path of a program the tests start as a child process, bundled from the current source by
 * test/support/test-bundle.ts (vitest's global setup): `bundled("ctxkit")` is the `ctxkit` CLI.
 */
import { join } from "node:path";

/** The bundled programs (see the entries of test/support/test-bundle.ts). */
export type BundledProgram = "ctxkit" | "sqlite-writer-worker" | "crash-worker" | "concurrent-worker";

/**
 * The bundled program's file, to run with `node`.
 *
 * @example
 * spawn(process.execPath, [bundled("ctxkit"), "sessions", "list"]);
 */
export function bundled(program: BundledProgram): string {
  const folder = process.env["CTXKIT_TEST_BUNDLE"];
  if (folder === undefined)
    throw new Error(
      "CTXKIT_TEST_BUNDLE is unset: run the tests with vitest (its global setup bundles the programs)",
    );
  return join(folder, `${program}.js`);
}
