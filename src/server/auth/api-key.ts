import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

const KEY_PATTERN = /^ctxk_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

/** A freshly generated API key: the secret (shown once) and what is stored (its id and hash). */
export interface GeneratedKey {
  /** The full key, `ctxk_<id>_<secret>`. Shown to the user once, never stored. */
  readonly key: string;
  /** The public part, used to find the stored hash. */
  readonly id: string;
  /** SHA-256 of the full key, in hex. */
  readonly hash: string;
}

/**
 * SHA-256 of a key, in hex. Keys are 256 random bits, so a fast hash is enough (no password stretching needed).
 *
 * @example
 * hashApiKey("ctxk_0123456789ab_…"); // "9f86d0…"
 */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

/**
 * Generates a key: `ctxk_`, 12 hex characters of id, `_`, 43 base64url characters (256 random bits).
 *
 * @example
 * const { key, id, hash } = generateApiKey(); // store { id, hash }, print key once
 */
export function generateApiKey(): GeneratedKey {
  const id = randomBytes(6).toString("hex");
  const key = `ctxk_${id}_${randomBytes(32).toString("base64url")}`;
  return { key, id, hash: hashApiKey(key) };
}

/**
 * The id of a well-formed key, or undefined for anything else (so malformed input never reaches a lookup).
 *
 * @example
 * apiKeyId("ctxk_0123456789ab_" + "a".repeat(43)); // "0123456789ab"
 */
export function apiKeyId(key: string): string | undefined {
  return KEY_PATTERN.exec(key)?.[1];
}

/**
 * True when `key` hashes to `storedHash`, compared in constant time.
 *
 * @example
 * if (keyMatches(presented, record.hash)) tenant = record.tenant;
 */
export function keyMatches(key: string, storedHash: string): boolean {
  const presented = Buffer.from(hashApiKey(key), "hex");
  const stored = Buffer.from(storedHash, "hex");
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
