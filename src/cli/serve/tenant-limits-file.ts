import { readFileSync } from "node:fs";
import { ConfigError } from "../../errors/errors.ts";
import { parseTenantLimits, type TenantLimits } from "../../server/limits/tenant-limits.ts";

/**
 * The limits of `ctxkit serve --tenant-limits <file>`: a JSON object of tenant names, each with the limits of
 * `ServerOptions.tenantLimits`. A missing file, bad JSON or a bad limit is a `ConfigError` naming the flag and
 * the file (exit code 2).
 *
 * @example
 * readTenantLimits("/etc/ctxkit/tenant-limits.json"); // { acme: { rateLimit: { requestsPerSecond: 20, burst: 40 } } }
 */
export function readTenantLimits(file: string): TenantLimits {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError("--tenant-limits", `cannot read ${file} (${(error as Error).message})`, {
      cause: error,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError("--tenant-limits", `${file} is not JSON (${(error as Error).message})`, {
      cause: error,
    });
  }
  return parseTenantLimits(json, "--tenant-limits", `in ${file}`);
}
