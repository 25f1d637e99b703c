import { randomBytes } from "node:crypto";
import { statSync } from "node:fs";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { z } from "zod";
import { ConfigError, StoreError } from "../../errors/errors.ts";
import { systemClock, type Clock } from "../../model/ids.ts";
import { limitOverridesSchema, type LimitOverrides } from "../limits/limit-overrides.ts";
import { withFileLock } from "./file-lock.ts";
import { keyPermissionsSchema, type KeyPermission } from "./key-permissions.ts";
import {
  newKeyRecord,
  verifyAgainst,
  type ApiKeyRecord,
  type KeyIdentity,
  type KeyStore,
} from "./key-store.ts";
import { ensureDirectory } from "../../errors/ensure-directory.ts";

const fileSchema = z.object({
  version: z.literal(1),
  keys: z.array(
    z.object({
      id: z.string(),
      tenant: z.string(),
      hash: z.string().regex(/^[0-9a-f]{64}$/),
      createdAt: z.string(),
      label: z.string().optional(),
      // Absent in files written before keys had limits of their own.
      limits: limitOverridesSchema.optional(),
      // Absent in files written before keys had permissions (such keys have none).
      permissions: keyPermissionsSchema.optional(),
    }),
  ),
});

/** A zod issue's path inside a key's `limits` ("rateLimit.burst") or of its `permissions` ("permissions.0"). */
function fieldPath(path: readonly PropertyKey[]): string {
  const [field, ...inside] = path.map(String);
  return field === "limits" ? inside.join(".") || "limits" : path.map(String).join(".");
}

/**
 * Keys in a JSON file (`{ "version": 1, "keys": [{ id, tenant, hash, createdAt, label?, limits?, permissions? }]
 * }`, mode 0600), written atomically; files written before keys had limits or permissions load unchanged. The
 * file is read again when it changes, so keys created (with their limits and permissions) by
 * `ctxkit serve keys add` work in a running server without a restart. Every change is a read-modify-write under an exclusive lock file
 * (`<file>.lock`), so parallel `keys add`/`revoke` processes never lose each other's updates; a revoke reads
 * the file back and throws if the key is still there.
 *
 * @example
 * const keys = new JsonFileKeyStore("/var/lib/ctxkit/server-keys.json");
 * const { key } = await keys.create("acme");
 */
export class JsonFileKeyStore implements KeyStore {
  readonly path: string;
  readonly #clock: Clock;
  #cache: { ino: number; mtimeMs: number; size: number; records: Map<string, ApiKeyRecord> } | undefined;

  constructor(path: string, options: { clock?: Clock } = {}) {
    this.path = path;
    this.#clock = options.clock ?? systemClock;
  }

  async #load(): Promise<Map<string, ApiKeyRecord>> {
    // Checked on every authenticated request: a synchronous stat of a local file costs microseconds, the promise
    // form a thread-pool round trip per request.
    const info = statSync(this.path, { throwIfNoEntry: false });
    if (info === undefined) return new Map();
    // Every save renames a new file in, so the inode tells a rewrite apart even within one mtime tick.
    const cache = this.#cache;
    if (cache?.ino === info.ino && cache.mtimeMs === info.mtimeMs && cache.size === info.size) {
      return cache.records;
    }
    const text = await readFile(this.path, "utf8");
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const parsed = fileSchema.safeParse(json);
    if (!parsed.success) throw this.#notAKeyFile(parsed.error.issues);
    const records = new Map<string, ApiKeyRecord>(parsed.data.keys.map((record) => [record.id, record]));
    this.#cache = { ino: info.ino, mtimeMs: info.mtimeMs, size: info.size, records };
    return records;
  }

  /**
   * What is wrong with the file: a bad limit or permission is named so it can be fixed; anything else is not a
   * key file.
   */
  #notAKeyFile(issues: readonly z.core.$ZodIssue[]): ConfigError {
    const field = issues.find((issue) => issue.path[2] === "limits" || issue.path[2] === "permissions");
    if (field !== undefined) {
      const index = Number(field.path[1]);
      const what = field.path[2] === "limits" ? "limit" : "permission";
      return new ConfigError(
        "server keys",
        `key ${index + 1} in ${this.path} has a bad ${what} at ${fieldPath(field.path.slice(2))}: ${field.message}; ` +
          "fix or remove it in the file, or revoke the key and add it again",
      );
    }
    return new ConfigError(
      "server keys",
      `${this.path} is not a ctxkit key file; move it away and create keys again`,
    );
  }

  async #save(records: Map<string, ApiKeyRecord>): Promise<void> {
    const temporary = `${this.path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
    try {
      await writeFile(
        temporary,
        `${JSON.stringify({ version: 1, keys: [...records.values()] }, null, 2)}\n`,
        { mode: 0o600, flush: true },
      );
      await rename(temporary, this.path);
    } finally {
      await rm(temporary, { force: true });
      this.#cache = undefined;
    }
  }

  /** Applies `change` to the records on disk under the file's lock; saves when it returns true. */
  async #modify(change: (records: Map<string, ApiKeyRecord>) => boolean): Promise<void> {
    ensureDirectory(dirname(this.path));
    await withFileLock(this.path, async () => {
      this.#cache = undefined; // another process may have written since the last read
      const records = new Map(await this.#load());
      if (change(records)) await this.#save(records);
    });
  }

  async create(
    tenant: string,
    label?: string,
    limits?: LimitOverrides,
    permissions?: readonly KeyPermission[],
  ): Promise<{ key: string; record: ApiKeyRecord }> {
    const created = newKeyRecord(tenant, this.#clock(), label, limits, permissions);
    await this.#modify((records) => {
      records.set(created.record.id, created.record);
      return true;
    });
    return created;
  }

  async verify(key: string): Promise<KeyIdentity | undefined> {
    const records = await this.#load();
    return verifyAgainst(key, (id) => records.get(id));
  }

  async list(): Promise<ApiKeyRecord[]> {
    return [...(await this.#load()).values()];
  }

  async revoke(id: string): Promise<boolean> {
    let found = false;
    await this.#modify((records) => (found = records.delete(id)));
    if (!found) return false;
    this.#cache = undefined;
    if ((await this.#load()).has(id)) {
      throw new StoreError(
        `key ${id} is still in ${this.path} after revoking it; check that nothing else rewrites the file and revoke again`,
      );
    }
    return true;
  }
}
