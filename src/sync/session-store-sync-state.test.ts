import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { postgresForTests, type TestPostgres } from "../../test/store/pg-server.ts";
import { NotFoundError, SchemaTooNewError, ValidationError } from "../errors/errors.ts";
import { MemorySessionStore } from "../store/memory/memory-session-store.ts";
import type { JsonValue } from "../model/message.ts";
import type { SessionStore } from "../store/session-store.ts";
import { openPostgresSessionStore } from "../store/postgres/open-postgres-session-store.ts";
import { openSqliteSessionStore } from "../store/sqlite/open-sqlite-session-store.ts";
import { ConversationLedger } from "./conversation-ledger.ts";
import { LEDGER_STATE_VERSION, type LedgerState } from "./ledger-state.ts";
import { LEDGER_SYNC_AGENT, SessionStoreSyncStateStore } from "./session-store-sync-state.ts";

const clock = () => new Date("2025-01-01T00:00:00Z");
const directories: string[] = [];
const opened: SessionStore[] = [];

let postgres: TestPostgres | undefined;
beforeAll(async () => {
  postgres = await postgresForTests();
});
afterAll(async () => {
  await postgres?.stop();
});

afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
  await Promise.all(
    directories.splice(0).map((directory) => rm(directory, { recursive: true, force: true })),
  );
});

async function sqlitePath(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), "ctxkit-sync-store-"));
  directories.push(directory);
  return join(directory, "ctxkit.db");
}

async function openSqlite(path: string): Promise<SessionStore> {
  const store = await openSqliteSessionStore({ path, retentionDays: 0 });
  opened.push(store);
  return store;
}

/** Creates session `id` the way the engine does: its first turn holds a user message. */
async function createSession(store: SessionStore, id: string): Promise<void> {
  await store.appendTurn(id, [
    { role: "user", content: [{ type: "text", text: "Hi" }] },
    { role: "assistant", content: [{ type: "text", text: "Hello" }] },
  ]);
}

/** The seed's first turns: a chat exchange, then the desktop executor runs once. */
function sampleLedger(): ConversationLedger {
  const ledger = new ConversationLedger({ clock });
  ledger.appendExchange("Hi", "Hello");
  const context = ledger.contextFor("desktop", "List my desktop");
  ledger.recordResult("desktop", {
    request: context.request,
    answer: "2 files",
    executorSessionId: "adk-7",
    seenUpTo: context.to,
  });
  return ledger;
}

const backends: [string, () => Promise<SessionStore>][] = [
  ["memory", async () => new MemorySessionStore({ clock })],
  ["sqlite", async () => openSqlite(await sqlitePath())],
  [
    "postgres",
    async () => {
      const schema = `t_${randomUUID().replaceAll("-", "")}`;
      const store = await openPostgresSessionStore({
        connectionString: postgres!.url,
        schema,
        retentionDays: 0,
      });
      opened.push(store);
      return store;
    },
  ],
];

describe.each(backends)("SessionStoreSyncStateStore (%s)", (_name, create) => {
  it("round-trips a ledger state and mirrors executor session ids onto the session", async () => {
    const sessions = await create();
    await createSession(sessions, "s1");
    const store = new SessionStoreSyncStateStore(sessions);
    expect(await store.load("s1")).toBeUndefined();
    const state = sampleLedger().toState();
    await store.save("s1", state);
    expect(await store.load("s1")).toEqual(JSON.parse(JSON.stringify(state)));
    const record = await sessions.getSession("s1");
    expect(record?.executorSessionIds).toEqual({ desktop: "adk-7" });
    expect((await sessions.getSyncState("s1", "desktop"))?.cursor).toBe(state.cursors["desktop"]);
    const dump = await sessions.dumpSession("s1");
    expect(dump.syncStates.map((row) => row.agent).sort()).toEqual([LEDGER_SYNC_AGENT, "desktop"].sort());
  });

  it("clears mirrors of agents the new state no longer has, and deletes to 'no state'", async () => {
    const sessions = await create();
    await createSession(sessions, "s1");
    const store = new SessionStoreSyncStateStore(sessions);
    await store.save("s1", sampleLedger().toState());
    const reset = sampleLedger();
    reset.reset();
    await store.save("s1", reset.toState());
    expect((await sessions.getSession("s1"))?.executorSessionIds).toEqual({});

    await store.save("s1", sampleLedger().toState());
    expect(await store.delete("s1")).toBe(true);
    expect(await store.delete("s1")).toBe(false);
    expect(await store.load("s1")).toBeUndefined();
    expect((await sessions.getSession("s1"))?.executorSessionIds).toEqual({});
    expect(await store.delete("unknown")).toBe(false);
  });

  it("refuses to save for a session the store does not hold, with a NotFoundError that says why", async () => {
    const sessions = await create();
    const store = new SessionStoreSyncStateStore(sessions);
    const failure = store.save("nope", sampleLedger().toState());
    await expect(failure).rejects.toBeInstanceOf(NotFoundError);
    await expect(failure).rejects.toThrow(/session "nope" not found; .*conversation agent/);
    expect(await store.load("nope")).toBeUndefined();
  });

  it("refuses invalid states, the reserved agent name and states from a newer ctxkit", async () => {
    const sessions = await create();
    await createSession(sessions, "s1");
    const store = new SessionStoreSyncStateStore(sessions);
    const state = sampleLedger().toState();
    const pastEnd: LedgerState = { ...state, cursors: { desktop: 99 } };
    await expect(store.save("s1", pastEnd)).rejects.toBeInstanceOf(ValidationError);
    const reserved: LedgerState = { ...state, cursors: { [LEDGER_SYNC_AGENT]: 0 } };
    await expect(store.save("s1", reserved)).rejects.toBeInstanceOf(ValidationError);
    expect(await store.load("s1")).toBeUndefined();

    const newer = JSON.parse(JSON.stringify({ ...state, version: LEDGER_STATE_VERSION + 1 })) as JsonValue;
    await sessions.setSyncState("s1", LEDGER_SYNC_AGENT, newer);
    await expect(store.load("s1")).rejects.toBeInstanceOf(SchemaTooNewError);
  });
});

describe("SessionStoreSyncStateStore across a restart", () => {
  it("keeps the previous complete state when a save dies midway (ledger row written last)", async () => {
    const sessions = new MemorySessionStore({ clock });
    await createSession(sessions, "s1");
    const store = new SessionStoreSyncStateStore(sessions);
    const first = sampleLedger();
    await store.save("s1", first.toState());
    // A store that dies on the first mirror-row write: had the ledger row gone first, it would hold the new state.
    const crashing = new Proxy(sessions, {
      get(target, key) {
        const value = Reflect.get(target, key) as unknown;
        if (key !== "setSyncState") return typeof value === "function" ? value.bind(target) : value;
        return async (...args: Parameters<SessionStore["setSyncState"]>) => {
          if (args[1] !== LEDGER_SYNC_AGENT) throw new Error("crash");
          return target.setSyncState(...args);
        };
      },
    });
    const later = sampleLedger();
    later.appendExchange("More", "Sure");
    await expect(new SessionStoreSyncStateStore(crashing).save("s1", later.toState())).rejects.toThrow(
      "crash",
    );
    expect(await store.load("s1")).toEqual(JSON.parse(JSON.stringify(first.toState())));
  });

  it("survives reopening the SQLite file, and the restored ledger resends nothing", async () => {
    const path = await sqlitePath();
    const first = await openSqlite(path);
    await createSession(first, "s1");
    const ledger = sampleLedger();
    await new SessionStoreSyncStateStore(first).save("s1", ledger.toState());
    const before = ledger.contextFor("desktop", "Delete the second file");
    await first.close();
    opened.splice(opened.indexOf(first), 1);

    const second = await openSqlite(path);
    expect((await second.getSession("s1"))?.executorSessionIds).toEqual({ desktop: "adk-7" });
    const state = await new SessionStoreSyncStateStore(second).load("s1");
    expect(state).toBeDefined();
    const restored = new ConversationLedger({ clock, ...(state && { state }) });
    expect(restored.executorSessionId("desktop")).toBe("adk-7");
    const after = restored.contextFor("desktop", "Delete the second file");
    expect(after).toEqual(before);
    expect(after.prior).toEqual([]);
    expect(after.message).toBe("Delete the second file");

    restored.appendExchange("Thanks", "You're welcome");
    const next = restored.contextFor("desktop", "Anything else?");
    expect(next.prior.map((entry) => entry.text)).toEqual(["Thanks", "You're welcome"]);
  });
});
