import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, ValidationError } from "../../errors/errors.ts";
import { apiKeyId, generateApiKey, hashApiKey, keyMatches } from "./api-key.ts";
import { JsonFileKeyStore } from "./json-file-key-store.ts";
import { MemoryKeyStore } from "./memory-key-store.ts";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});
function folder() {
  const path = mkdtempSync(join(tmpdir(), "ctxkit-keys-"));
  folders.push(path);
  return path;
}

describe("API keys", () => {
  it("are 256 random bits with a public id, compared by hash", () => {
    const generated = generateApiKey();
    expect(generated.key).toMatch(/^ctxk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    expect(apiKeyId(generated.key)).toBe(generated.id);
    expect(generated.hash).toBe(hashApiKey(generated.key));
    expect(keyMatches(generated.key, generated.hash)).toBe(true);
    expect(keyMatches(`${generated.key.slice(0, -1)}x`, generated.hash)).toBe(false);
    expect(generateApiKey().key).not.toBe(generated.key);
    expect(apiKeyId("Bearer nonsense")).toBeUndefined();
  });

  it("the memory store verifies, names the tenant, and forgets revoked keys", async () => {
    const keys = new MemoryKeyStore();
    const { key, record } = await keys.create("acme", "laptop");
    expect(await keys.verify(key)).toEqual({ keyId: record.id, tenant: "acme" });
    expect(await keys.verify(key.replace(/.$/, "_"))).toBeUndefined();
    expect(JSON.stringify(await keys.list())).not.toContain(key);
    await keys.revoke(record.id);
    expect(await keys.verify(key)).toBeUndefined();
    await expect(keys.create("not a tenant!")).rejects.toThrow(/tenant/);
  });
});

/** A key file as written before keys had limits or permissions: one key of tenant acme. */
function legacyKeyFile(): { path: string; old: ReturnType<typeof generateApiKey> } {
  const path = join(folder(), "keys.json");
  const old = generateApiKey();
  writeFileSync(
    path,
    JSON.stringify({
      version: 1,
      keys: [{ id: old.id, tenant: "acme", hash: old.hash, createdAt: "2026-01-01T00:00:00.000Z" }],
    }),
  );
  return { path, old };
}

describe("JsonFileKeyStore", () => {
  it("stores only hashes, in a file only its owner can read, and sees keys another process adds", async () => {
    const path = join(folder(), "nested", "keys.json");
    const server = new JsonFileKeyStore(path);
    expect(await server.verify(generateApiKey().key)).toBeUndefined(); // no file yet
    const cli = new JsonFileKeyStore(path);
    const { key, record } = await cli.create("acme");
    const text = readFileSync(path, "utf8");
    expect(text).not.toContain(key);
    expect(text).toContain(record.hash);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(await server.verify(key)).toEqual({ keyId: record.id, tenant: "acme" });
    expect(await cli.revoke(record.id)).toBe(true);
    expect(await server.verify(key)).toBeUndefined();
    expect(await cli.revoke(record.id)).toBe(false);
  });

  it("keeps a key's own limits, and loads a file written before keys had limits", async () => {
    const { path, old } = legacyKeyFile();
    const keys = new JsonFileKeyStore(path);
    expect(await keys.verify(old.key)).toEqual({ keyId: old.id, tenant: "acme" });
    const limits = {
      rateLimit: { requestsPerSecond: 5, burst: 10, maxWaitMs: 1_000 },
      maxBodyBytes: 65_536,
      upstreamTimeoutMs: 30_000,
    };
    const { key, record } = await keys.create("acme", "ci", limits);
    expect(record.limits).toEqual(limits);
    const reread = new JsonFileKeyStore(path);
    expect(await reread.verify(key)).toEqual({ keyId: record.id, tenant: "acme", limits });
    expect((await reread.list()).find((listed) => listed.id === old.id)?.limits).toBeUndefined();
    const { record: unlimited } = await keys.create("acme", undefined, { rateLimit: false });
    expect(unlimited.limits).toEqual({ rateLimit: false });
    expect((await keys.create("acme", undefined, {})).record.limits).toBeUndefined();
  });

  it("keeps a key's permissions, and loads a file written before keys had permissions (they have none)", async () => {
    const { path, old } = legacyKeyFile();
    const keys = new JsonFileKeyStore(path);
    const { key, record } = await keys.create("monitoring", "prometheus", undefined, ["metrics", "metrics"]);
    expect(record.permissions).toEqual(["metrics"]);
    const reread = new JsonFileKeyStore(path);
    expect(await reread.verify(key)).toEqual({
      keyId: record.id,
      tenant: "monitoring",
      permissions: ["metrics"],
    });
    expect(await reread.verify(old.key)).toEqual({ keyId: old.id, tenant: "acme" });
    const stored = JSON.parse(readFileSync(path, "utf8")) as { keys: Record<string, unknown>[] };
    expect(stored.keys.map((entry) => entry["permissions"])).toEqual([undefined, ["metrics"]]);
    expect((await keys.create("acme", undefined, undefined, [])).record.permissions).toBeUndefined();

    const memory = new MemoryKeyStore();
    await expect(memory.create("acme", undefined, undefined, ["admin" as "metrics"])).rejects.toBeInstanceOf(
      ValidationError,
    );
    stored.keys[1]!["permissions"] = ["admin"];
    writeFileSync(path, JSON.stringify(stored));
    await expect(new JsonFileKeyStore(path).list()).rejects.toThrow(
      /key 2 in .*keys\.json has a bad permission at permissions\.0: a permission is one of: metrics/,
    );
  });

  it("refuses bad limits: a ValidationError on create, a ConfigError naming the key and field in a file", async () => {
    const keys = new MemoryKeyStore();
    await expect(keys.create("acme", undefined, { maxBodyBytes: 10 })).rejects.toBeInstanceOf(
      ValidationError,
    );
    await expect(
      keys.create("acme", undefined, { rateLimit: { requestsPerSecond: 0, burst: 1 } }),
    ).rejects.toThrow(/rateLimit\.requestsPerSecond/);
    expect(await keys.list()).toHaveLength(0);
    const path = join(folder(), "keys.json");
    const store = new JsonFileKeyStore(path);
    await store.create("acme", undefined, { maxBodyBytes: 4_096 });
    const file = JSON.parse(readFileSync(path, "utf8")) as { keys: { limits: Record<string, unknown> }[] };
    file.keys[0]!.limits["upstreamTimeoutMs"] = -5;
    writeFileSync(path, JSON.stringify(file));
    const failure = await new JsonFileKeyStore(path).list().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConfigError);
    expect((failure as Error).message).toMatch(/key 1 in .*keys\.json has a bad limit at upstreamTimeoutMs/);
  });

  it("refuses a file that is not a key file, saying what to do", async () => {
    const path = join(folder(), "keys.json");
    writeFileSync(path, '{"something":"else"}');
    await expect(new JsonFileKeyStore(path).verify(generateApiKey().key)).rejects.toThrow(
      /not a ctxkit key file/,
    );
  });
});
