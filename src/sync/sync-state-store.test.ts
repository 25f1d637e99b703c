import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CorruptStoreError, SchemaTooNewError, ValidationError } from "../errors/errors.ts";
import { ConversationLedger } from "./conversation-ledger.ts";
import { JsonFileSyncStateStore } from "./json-file-sync-state-store.ts";
import { MemorySyncStateStore, type SyncStateStore } from "./sync-state-store.ts";

const directories: string[] = [];
async function temporaryFile(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), "ctxkit-sync-"));
  directories.push(directory);
  return join(directory, "nested", "sync-state.json");
}
afterEach(async () => {
  await Promise.all(
    directories.splice(0).map((directory) => rm(directory, { recursive: true, force: true })),
  );
});

function sampleLedger(): ConversationLedger {
  const ledger = new ConversationLedger({ clock: () => new Date("2025-01-01T00:00:00Z") });
  ledger.appendExchange("Hi", "Hello");
  ledger.recordResult("desktop", { request: "ls", answer: "2 files", executorSessionId: "adk-7" });
  return ledger;
}

const backends: [string, () => Promise<SyncStateStore>][] = [
  ["memory", async () => new MemorySyncStateStore()],
  ["json file", async () => new JsonFileSyncStateStore(await temporaryFile())],
];

describe.each(backends)("SyncStateStore (%s)", (_name, create) => {
  it("saves, loads and deletes states per session", async () => {
    const store = await create();
    expect(await store.load("s1")).toBeUndefined();
    await Promise.all([
      store.save("s1", sampleLedger().toState()),
      store.save("s2", new ConversationLedger().toState()),
    ]);
    const loaded = await store.load("s1");
    expect(loaded).toEqual(JSON.parse(JSON.stringify(sampleLedger().toState())));
    expect((await store.load("s2"))?.entries).toEqual([]);
    expect(await store.delete("s1")).toBe(true);
    expect(await store.delete("s1")).toBe(false);
    expect(await store.load("s1")).toBeUndefined();
    expect(await store.load("s2")).toBeDefined();
  });

  it("is not affected by callers mutating what they saved or loaded", async () => {
    const store = await create();
    const state = sampleLedger().toState();
    await store.save("s1", state);
    const loaded = await store.load("s1");
    (loaded!.cursors as Record<string, number>)["desktop"] = 0;
    expect((await store.load("s1"))?.cursors).toEqual({ desktop: 4 });
  });
});

describe("JsonFileSyncStateStore", () => {
  it("survives a restart: a new instance on the same file sees the state", async () => {
    const file = await temporaryFile();
    await new JsonFileSyncStateStore(file).save("s1", sampleLedger().toState());
    const restored = new ConversationLedger({ state: await new JsonFileSyncStateStore(file).load("s1") });
    expect(restored.cursor("desktop")).toBe(4);
    expect(restored.executorSessionId("desktop")).toBe("adk-7");
    const leftovers = (await readdir(join(file, ".."))).filter((name) => name.endsWith(".tmp"));
    expect(leftovers).toEqual([]);
  });

  it("refuses to save an invalid state and keeps the file unchanged", async () => {
    const file = await temporaryFile();
    const store = new JsonFileSyncStateStore(file);
    await store.save("s1", sampleLedger().toState());
    const before = await readFile(file, "utf8");
    const broken = { ...sampleLedger().toState(), cursors: { desktop: 99 } };
    await expect(store.save("s1", broken)).rejects.toBeInstanceOf(ValidationError);
    expect(await readFile(file, "utf8")).toBe(before);
  });

  it("reports a damaged file and a file from a newer ctxkit with typed errors", async () => {
    const file = await temporaryFile();
    const store = new JsonFileSyncStateStore(file);
    await store.save("s1", sampleLedger().toState());
    await writeFile(file, "{ not json");
    await expect(store.load("s1")).rejects.toBeInstanceOf(CorruptStoreError);
    await writeFile(file, JSON.stringify({ version: 99, sessions: {} }));
    await expect(store.load("s1")).rejects.toBeInstanceOf(SchemaTooNewError);
    await writeFile(file, JSON.stringify([1, 2]));
    await expect(store.load("s1")).rejects.toBeInstanceOf(CorruptStoreError);
  });
});
