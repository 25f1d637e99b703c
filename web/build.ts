import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

const webDir = fileURLToPath(new URL(".", import.meta.url));

/** Where `npm run build` puts the inspector: `web/dist`, which the server serves at `/`. */
export const DEFAULT_WEB_OUT: string = resolve(webDir, "dist");

/**
 * Builds the web inspector into `outDir`: the TypeScript modules under `web/src` compiled by `tsc` to plain ES
 * modules (the browser loads them as they are; no bundler, no network), and the files of `web/static`
 * (`index.html`, the stylesheet) copied beside them. The folder is emptied first. The inspector's types are
 * imported type-only from `ctxkit/server` (the server's wire schemas), whose declarations are the package's
 * `dist/`: `npm run build` makes them first.
 *
 * @example
 * buildInspector("/tmp/inspector"); // then createServer({ …, webRoot: "/tmp/inspector" })
 */
export function buildInspector(outDir: string = DEFAULT_WEB_OUT): void {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", resolve(webDir, "tsconfig.build.json"), "--outDir", outDir], {
    stdio: "inherit",
  });
  cpSync(resolve(webDir, "static"), outDir, { recursive: true });
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  buildInspector(process.argv[2] === undefined ? DEFAULT_WEB_OUT : resolve(process.argv[2]));
}
