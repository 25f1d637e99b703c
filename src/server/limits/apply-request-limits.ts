import type { MiddlewareHandler } from "hono";
import type { ServerEnv } from "../server-context.ts";
import type { ServerLimits } from "../server-options.ts";
import { bodySizeLimit } from "./body-size-limit.ts";
import { resolveLimits } from "./request-limits.ts";
import type { TenantLimits } from "./tenant-limits.ts";

/**
 * Sets the request's limits (`c.get("limits")`) from its key's, its tenant's and the server's, once the key is
 * known, and holds the body to the key's or tenant's smaller limit. The server's own body limit runs before
 * authentication, so nothing larger than it is ever read; this one only lowers it.
 *
 * @example
 * app.use("/v1/*", authenticate(keys), applyRequestLimits(limits, { acme: { maxBodyBytes: 65_536 } }));
 */
export function applyRequestLimits(
  server: ServerLimits,
  tenants: TenantLimits,
): MiddlewareHandler<ServerEnv> {
  const byTenant = new Map(Object.entries(tenants)); // a Map: no tenant is named like an Object.prototype field
  return async (c, next) => {
    const limits = resolveLimits(server, byTenant.get(c.get("tenant")), c.get("keyLimits"));
    c.set("limits", limits);
    if (limits.maxBodyBytes < server.maxBodyBytes) return bodySizeLimit(limits.maxBodyBytes)(c, next);
    await next();
  };
}
