/**
 * What an API key may do beyond its own tenant's API. A key without permissions (every key made before they
 * existed) may use its tenant's `/v1` routes only.
 */
import { z } from "zod";

/**
 * The permissions a key may hold. `metrics`: read `GET /metrics`, whose counts are server-wide (every tenant's
 * traffic), so only an operator's key should have it.
 */
export const KEY_PERMISSIONS = ["metrics"] as const;

/** One of `KEY_PERMISSIONS`. */
export type KeyPermission = (typeof KEY_PERMISSIONS)[number];

/** A key's permissions as given to `KeyStore.create` or stored in a key file: known names only. */
export const keyPermissionsSchema = z.array(
  z.enum(KEY_PERMISSIONS, { error: `a permission is one of: ${KEY_PERMISSIONS.join(", ")}` }),
);

/**
 * Each permission once, in `KEY_PERMISSIONS` order; undefined for none (so a record without permissions has no
 * field for them, as before they existed).
 *
 * @example
 * normalizePermissions(["metrics", "metrics"]); // ["metrics"]
 * normalizePermissions([]); // undefined
 */
export function normalizePermissions(
  permissions: readonly KeyPermission[] | undefined,
): KeyPermission[] | undefined {
  const held = KEY_PERMISSIONS.filter((permission) => permissions?.includes(permission));
  return held.length === 0 ? undefined : held;
}
