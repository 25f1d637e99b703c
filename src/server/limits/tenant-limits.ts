import { z } from "zod";
import { ConfigError } from "../../errors/errors.ts";
import { tenantSchema } from "../auth/key-store.ts";
import { limitOverridesSchema, type LimitOverrides } from "./limit-overrides.ts";

/** Limits by tenant name, as in `ServerOptions.tenantLimits` and `ctxkit serve --tenant-limits`'s file. */
export type TenantLimits = Readonly<Record<string, LimitOverrides>>;

/** `TenantLimits`: tenant names as keys accept, each with its `LimitOverrides`. */
export const tenantLimitsSchema = z.record(tenantSchema, limitOverridesSchema);

/**
 * Validates tenant limits; a `ConfigError` naming `setting`, where it came from and each field at fault.
 *
 * @example
 * parseTenantLimits({ acme: { rateLimit: { requestsPerSecond: 20, burst: 40 } } }, "--tenant-limits", "in limits.json");
 */
export function parseTenantLimits(value: unknown, setting: string, where: string): TenantLimits {
  const result = tenantLimitsSchema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.map(String).join(".") || "(root)"}: ${issue.message}`)
    .join("; ");
  throw new ConfigError(
    setting,
    `invalid tenant limits ${where}: ${issues}; write e.g. ` +
      '{"acme": {"rateLimit": {"requestsPerSecond": 20, "burst": 40, "maxWaitMs": 5000}, "maxBodyBytes": 1048576, "upstreamTimeoutMs": 60000}}',
  );
}
