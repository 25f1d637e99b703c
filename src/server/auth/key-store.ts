/**
 * API keys of the server: each bound to one tenant, stored as a SHA-256 hash. The key itself is returned once,
 * by `create`, and never stored or logged.
 */
import { z } from "zod";
import { validate } from "../../model/schemas.ts";
import { hasOverrides, limitOverridesSchema, type LimitOverrides } from "../limits/limit-overrides.ts";
import { apiKeyId, generateApiKey, keyMatches } from "./api-key.ts";
import { keyPermissionsSchema, normalizePermissions, type KeyPermission } from "./key-permissions.ts";

/** A stored key: no secret, only its hash. */
export interface ApiKeyRecord {
  readonly id: string;
  readonly tenant: string;
  /** SHA-256 of the key, hex. */
  readonly hash: string;
  readonly createdAt: string;
  readonly label?: string;
  /** The key's own limits, over its tenant's and the server's (`ServerOptions.tenantLimits`, `limits`). */
  readonly limits?: LimitOverrides;
  /** What the key may do beyond its tenant's API (`metrics`: read `GET /metrics`); absent for nothing more. */
  readonly permissions?: readonly KeyPermission[];
}

/** Who a verified key belongs to, the limits it sets for itself and its permissions. */
export interface KeyIdentity {
  readonly keyId: string;
  readonly tenant: string;
  readonly limits?: LimitOverrides;
  /** Absent when the key has none. */
  readonly permissions?: readonly KeyPermission[];
}

/**
 * Where the server keeps its keys.
 *
 * @example
 * const { key } = await keys.create("acme");
 * (await keys.verify(key))?.tenant; // "acme"
 */
export interface KeyStore {
  /**
   * Creates a key for `tenant`, with limits and permissions of its own if given (validated), and returns it with
   * its record; the key is not kept anywhere.
   */
  create(
    tenant: string,
    label?: string,
    limits?: LimitOverrides,
    permissions?: readonly KeyPermission[],
  ): Promise<{ key: string; record: ApiKeyRecord }>;
  /** The identity of a valid key; undefined for a malformed, unknown or revoked one. */
  verify(key: string): Promise<KeyIdentity | undefined>;
  list(): Promise<ApiKeyRecord[]>;
  /** Revokes a key by id; false when there was none. */
  revoke(id: string): Promise<boolean>;
}

/** Tenant names: what `ctxkit serve keys add` accepts. */
export const tenantSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "a tenant is 1–64 letters, digits, '.', '_' or '-'");

/**
 * A new key record for `tenant` with its own `limits` and `permissions`, if any (all validated:
 * `ValidationError`), and the key it was made from.
 *
 * @example
 * const { key, record } = newKeyRecord("acme", new Date(), "ci", { maxBodyBytes: 65_536 });
 * const operator = newKeyRecord("monitoring", new Date(), "prometheus", undefined, ["metrics"]);
 */
export function newKeyRecord(
  tenant: string,
  now: Date,
  label?: string,
  limits?: LimitOverrides,
  permissions?: readonly KeyPermission[],
): { key: string; record: ApiKeyRecord } {
  const checked = validate(tenantSchema, tenant, "tenant");
  const checkedLimits =
    limits === undefined ? undefined : validate(limitOverridesSchema, limits, "key limits");
  const checkedPermissions = normalizePermissions(
    permissions === undefined ? undefined : validate(keyPermissionsSchema, permissions, "key permissions"),
  );
  const generated = generateApiKey();
  return {
    key: generated.key,
    record: {
      id: generated.id,
      tenant: checked,
      hash: generated.hash,
      createdAt: now.toISOString(),
      ...(label !== undefined && { label }),
      ...(hasOverrides(checkedLimits) && { limits: checkedLimits }),
      ...(checkedPermissions !== undefined && { permissions: checkedPermissions }),
    },
  };
}

/**
 * Verifies `key` against the record a lookup by its id found (constant-time hash comparison).
 *
 * @example
 * const identity = verifyAgainst(key, (id) => records.get(id));
 */
export async function verifyAgainst(
  key: string,
  lookup: (id: string) => ApiKeyRecord | undefined | Promise<ApiKeyRecord | undefined>,
): Promise<KeyIdentity | undefined> {
  const id = apiKeyId(key);
  if (id === undefined) return undefined;
  const record = await lookup(id);
  if (record === undefined || !keyMatches(key, record.hash)) return undefined;
  return {
    keyId: record.id,
    tenant: record.tenant,
    ...(hasOverrides(record.limits) && { limits: record.limits }),
    ...(record.permissions !== undefined &&
      record.permissions.length > 0 && { permissions: record.permissions }),
  };
}
