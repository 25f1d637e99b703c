import { mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { z } from "zod";
import { ConfigError } from "../../errors/errors.ts";
import { systemClock, type Clock } from "../../model/ids.ts";
import {
  newKeyRecord,
  verifyAgainst,
  type ApiKeyRecord,
  type KeyIdentity,
  type KeyStore,
} from "./key-store.ts";

const fileSchema = z.object({
  version: z.literal(1),
  keys: z.array(
    z.object({
      id: z.string(),
      tenant: z.string(),
      hash: z.string().regex(/^[0-9a-f]{64}$/),
      createdAt: z.string(),
      label: z.string().optional(),
    }),
  ),
});

/**
 * Keys in a JSON file (`{ "version": 1, "keys": [{ id, tenant, hash, createdAt }] }`, mode 0600), written
 * atomically. The file is read again when it changes, so keys created by `ctxkit serve keys add` work in a
 * running server without a restart.
 *
 * @example
 * const keys = new JsonFileKeyStore("/var/lib/ctxkit/server-keys.json");
 * const { key } = await keys.create("acme");
 */
export class JsonFileKeyStore implements KeyStore {
  readonly path: string;
  readonly #clock: Clock;
  #cache: { mtimeMs: number; size: number; records: Map<string, ApiKeyRecord> } | undefined;

  constructor(path: string, options: { clock?: Clock } = {}) {
    this.path = path;
    this.#clock = options.clock ?? systemClock;
  }

  async #load(): Promise<Map<string, ApiKeyRecord>> {
    let info;
    try {
      info = await stat(this.path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return new Map();
      throw error;
    }
    if (this.#cache?.mtimeMs === info.mtimeMs && this.#cache.size === info.size) return this.#cache.records;
    const text = await readFile(this.path, "utf8");
    let parsed;
    try {
      parsed = fileSchema.parse(JSON.parse(text));
    } catch {
      throw new ConfigError(
        "server keys",
        `${this.path} is not a ctxkit key file; move it away and create keys again`,
      );
    }
    const records = new Map<string, ApiKeyRecord>(parsed.keys.map((record) => [record.id, record]));
    this.#cache = { mtimeMs: info.mtimeMs, size: info.size, records };
    return records;
  }

  async #save(records: Map<string, ApiKeyRecord>): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true });
    const temporary = `${this.path}.${process.pid}.tmp`;
    await writeFile(temporary, `${JSON.stringify({ version: 1, keys: [...records.values()] }, null, 2)}\n`, {
      mode: 0o600,
    });
    await rename(temporary, this.path);
    this.#cache = undefined;
  }

  async create(tenant: string, label?: string): Promise<{ key: string; record: ApiKeyRecord }> {
    const records = new Map(await this.#load());
    const created = newKeyRecord(tenant, this.#clock(), label);
    records.set(created.record.id, created.record);
    await this.#save(records);
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
    const records = new Map(await this.#load());
    if (!records.delete(id)) return false;
    await this.#save(records);
    return true;
  }
}
