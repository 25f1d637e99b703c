import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
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

  it("refuses a file that is not a key file, saying what to do", async () => {
    const path = join(folder(), "keys.json");
    writeFileSync(path, '{"something":"else"}');
    await expect(new JsonFileKeyStore(path).verify(generateApiKey().key)).rejects.toThrow(
      /not a ctxkit key file/,
    );
  });
});
