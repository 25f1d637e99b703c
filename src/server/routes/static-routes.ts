import { existsSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { extname, join, resolve, sep } from "node:path";
import type { Hono } from "hono";
import { packageRoot } from "../../config/package-root.ts";
import type { ServerEnv } from "../server-context.ts";

const MEDIA_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
};

/**
 * The inspector's build folder of this package (`web/dist`), when it exists.
 *
 * @example
 * const root = defaultWebRoot(); // "/…/ctxkit/web/dist" or undefined
 */
export function defaultWebRoot(): string | undefined {
  const packageFolder = packageRoot();
  if (packageFolder === undefined) return undefined;
  const root = join(packageFolder, "web", "dist");
  return existsSync(root) ? root : undefined;
}

/** The file a URL path names inside `root`, or undefined when it would leave it. */
function fileFor(root: string, path: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return undefined;
  }
  if (decoded.includes("\0")) return undefined;
  const file = resolve(root, `.${decoded.endsWith("/") ? `${decoded}index.html` : decoded}`);
  return file === root || file.startsWith(root.endsWith(sep) ? root : root + sep) ? file : undefined;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * Serves the inspector's static files from `root` at `/` (GET and HEAD); a path that names no file — and is
 * not an API path — gets `index.html`, so client-side routes work. Security headers come from the app-wide
 * middleware.
 *
 * @example
 * registerStaticRoutes(app, "/srv/ctxkit/web/dist");
 */
export function registerStaticRoutes(app: Hono<ServerEnv>, root: string): void {
  const base = resolve(root);
  const index = join(base, "index.html");
  app.get("/*", async (c, next) => {
    const path = c.req.path;
    if (
      path.startsWith("/v1/") ||
      path === "/v1" ||
      path === "/health" ||
      path === "/ready" ||
      path === "/metrics"
    )
      return next();
    const candidate = fileFor(base, path);
    const file = candidate !== undefined && (await isFile(candidate)) ? candidate : index;
    if (!(await isFile(file))) return next();
    const type = MEDIA_TYPES[extname(file).toLowerCase()] ?? "application/octet-stream";
    const cache = file.endsWith(".html") ? "no-cache" : "public, max-age=3600";
    return c.body(new Uint8Array(await readFile(file)), 200, {
      "Content-Type": type,
      "Cache-Control": cache,
    });
  });
}
