import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let found: string | null | undefined;

/**
 * The folder of the ctxkit package this code runs from (its package.json, `src/` or `dist/`, `web/dist`): the
 * nearest folder above this module whose package.json is ctxkit's. Found by looking rather than by a fixed
 * `../..`, so it holds wherever the module sits — `src/`, `dist/`, or a bundle of the CLI. Undefined when this
 * code runs outside the package (an application's own bundle of ctxkit).
 *
 * @example
 * const root = packageRoot();
 * const inspector = root && join(root, "web", "dist");
 */
export function packageRoot(): string | undefined {
  if (found !== undefined) return found ?? undefined;
  for (let folder = dirname(fileURLToPath(import.meta.url)); ; folder = dirname(folder)) {
    if (isCtxkitPackage(join(folder, "package.json"))) return (found = folder);
    if (dirname(folder) === folder) {
      found = null;
      return undefined;
    }
  }
}

function isCtxkitPackage(path: string): boolean {
  if (!existsSync(path)) return false;
  try {
    return (JSON.parse(readFileSync(path, "utf8")) as { name?: unknown }).name === "ctxkit";
  } catch {
    return false;
  }
}
