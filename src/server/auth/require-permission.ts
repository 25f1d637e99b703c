import type { MiddlewareHandler } from "hono";
import { HttpError } from "../http/http-error.ts";
import type { ServerEnv } from "../server-context.ts";
import type { KeyPermission } from "./key-permissions.ts";

/**
 * After `authenticate`: lets the request on only when its key holds `permission`; 403 `forbidden` otherwise,
 * naming the permission and how to get a key with it (`remedy`). Without auth the one local user holds them all.
 *
 * @example
 * app.use("/metrics", authenticate(keys), requirePermission("metrics", "GET /metrics", "create one with …"));
 */
export function requirePermission(
  permission: KeyPermission,
  route: string,
  remedy: string,
): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    if (!c.get("keyPermissions").includes(permission)) {
      throw new HttpError(
        403,
        "forbidden",
        `this API key may not use ${route}: it needs the "${permission}" permission; ${remedy}`,
      );
    }
    await next();
  };
}
