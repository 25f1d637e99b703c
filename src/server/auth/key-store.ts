/**
 * API keys of the server: each bound to one tenant, stored as a SHA-256 hash. The key itself is returned once,
 * by `create`, and never stored or logged.
 */
import { z } from "zod";
import { validate } from "../../model/schemas.ts";
import { hasOverrides, limitOverridesSchema, type LimitOverrides } from "../limits/limit-overrides.ts";
import { apiKeyId, generateApiKey, keyMatches } from "./api-key.ts";

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
}

/** Who a verified key belongs to, and the limits it sets for itself. */
export interface KeyIdentity {
  readonly keyId: string;
  readonly tenant: string;
  readonly limits?: LimitOverrides;
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
   * Creates a key for `tenant`, with limits of its own if given (validated), and returns it with its record; the
   * key is not kept anywhere.
   */
  create(
    tenant: string,
    label?: string,
    limits?: LimitOverrides,
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
 * A new key record for `tenant` with its own `limits`, if any (both validated: `ValidationError`), and the key it
 * was made from.
 *
 * @example
 * const { key, record } = newKeyRecord("acme", new Date(), "ci", { maxBodyBytes: 65_536 });
 */
export function newKeyRecord(
  tenant: string,
  now: Date,
  label?: string,
  limits?: LimitOverrides,
): { key: string; record: ApiKeyRecord } {
  const checked = validate(tenantSchema, tenant, "tenant");
  const checkedLimits =
    limits === undefined ? undefined : validate(limitOverridesSchema, limits, "key limits");
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
  };
}
