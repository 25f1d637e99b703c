import { existsSync } from "node:fs";
import { join, sep } from "node:path";

/**
 * How the user runs this CLI, for the commands its hints print: in a ctxkit checkout (a package root with
 * `src/cli/bin.ts`, not installed under `node_modules`) `npm run ctxkit --`, which runs it on the project's own
 * Node in a second; where ctxkit is installed as a dependency, `npx ctxkit`. A bare `ctxkit` is on no PATH in
 * either place.
 *
 * @example
 * `${cliCommand(packageRoot())} sessions list` // "npm run ctxkit -- sessions list" in a checkout
 */
export function cliCommand(root: string | undefined): string {
  if (root === undefined) return "npx ctxkit";
  const checkout =
    !root.split(sep).includes("node_modules") && existsSync(join(root, "src", "cli", "bin.ts"));
  return checkout ? "npm run ctxkit --" : "npx ctxkit";
}
