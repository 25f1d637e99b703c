import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { MemorySessionStore } from "../../store/memory/index.ts";
import { messageText } from "../../model/blocks.ts";
import type { Executor, ExecutorRun } from "../../sync/executor.ts";
import { ConversationLedger } from "../../sync/conversation-ledger.ts";
import { emptyLedgerState } from "../../sync/ledger-state.ts";
import { MemoryKeyStore } from "../auth/memory-key-store.ts";
import { startServer, type RunningServer, type StartServerOptions } from "../start-server.ts";
import { syncSessionId, TenantSyncStateStore } from "./tenant-sync-state-store.ts";

const running: RunningServer[] = [];
const sockets: WebSocket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate();
  await Promise.all(running.splice(0).map((server) => server.close()));
});

/** A sync server whose executors say which tenant ran them and record what they were given. */
async function start(options: Partial<StartServerOptions> = {}) {
  const keys = new MemoryKeyStore();
  const acme = (await keys.create("acme")).key;
  const globex = (await keys.create("globex")).key;
  const runs: { tenant: string; run: ExecutorRun; intent: string }[] = [];
  const store = options.store ?? new MemorySessionStore();
  const server = await startServer({
    store,
    keys,
    port: 0,
    webRoot: false,
    // No state store: the server keeps the sync state in its session store.
    sync: (tenant) => {
      const desktop: Executor = async (intent, run) => {
        runs.push({ tenant, run, intent });
        return {
          answer: `${tenant} did: ${intent}`,
          toolSummary: [{ name: "execute_cli", input: { command: "ls ~/Desktop" }, result: "file1.txt" }],
          sessionId: `${tenant}-exec`,
        };
      };
      return { executors: { desktop } };
    },
    ...options,
  });
  running.push(server);
  return { server, acme, globex, runs, store, keys };
}

interface Connection {
  readonly socket: WebSocket;
  send(message: object): void;
  next(type: string): Promise<Record<string, unknown>>;
}

function connect(
  url: string,
  options: WebSocket.ClientOptions = {},
  protocols?: string[],
): Promise<Connection> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, protocols, options);
    sockets.push(socket);
    const received: Record<string, unknown>[] = [];
    const waiting: { type: string; resolve: (message: Record<string, unknown>) => void }[] = [];
    socket.on("message", (data: Buffer) => {
      const message = JSON.parse(data.toString("utf8")) as Record<string, unknown>;
      const index = waiting.findIndex((entry) => entry.type === message["type"]);
      if (index >= 0) waiting.splice(index, 1)[0]!.resolve(message);
      else received.push(message);
    });
    socket.once("open", () =>
      resolve({
        socket,
        send: (message) => socket.send(JSON.stringify(message)),
        next: (type) =>
          new Promise((found) => {
            const index = received.findIndex((message) => message["type"] === type);
            if (index >= 0) found(received.splice(index, 1)[0]!);
            else waiting.push({ type, resolve: found });
          }),
      }),
    );
    socket.once("unexpected-response", (_request, response) =>
      reject(new Error(`HTTP ${response.statusCode ?? 0}`)),
    );
    socket.once("error", reject);
  });
}

const syncUrl = (server: RunningServer) => `${server.url.replace(/^http/, "ws")}/v1/sync`;
const bearer = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });

describe("the agent-sync WebSocket at /v1/sync", () => {
  it("refuses a missing, malformed or unknown key with 401 before the upgrade, and other paths with 404", async () => {
    const { server } = await start();
    await expect(connect(syncUrl(server))).rejects.toThrow("HTTP 401");
    await expect(connect(syncUrl(server), bearer("not-a-key"))).rejects.toThrow("HTTP 401");
    await expect(connect(syncUrl(server), bearer(`ctxk_0123456789ab_${"A".repeat(43)}`))).rejects.toThrow(
      "HTTP 401",
    );
    await expect(connect(`${server.url.replace(/^http/, "ws")}/v1/other`)).rejects.toThrow("HTTP 404");
    expect(server.sync?.tenants).toEqual([]);
  });

  it("cuts a socket whose key is revoked while it is open; other keys' sockets go on", async () => {
    const { server, acme, keys } = await start();
    const { key, record } = await keys.create("acme");
    const doomed = await connect(syncUrl(server), bearer(key));
    const kept = await connect(syncUrl(server), bearer(acme));
    const closed = new Promise((resolve) => doomed.socket.once("close", resolve));
    await keys.revoke(record.id);
    await closed; // within the recheck interval (5 s)
    kept.send({ type: "session_context", session_id: "still-here" });
    expect(await kept.next("session_ready")).toMatchObject({ restored: false });
  }, 15_000);

  it("gives each tenant its own hub: the same session id is a different session, with its own executors", async () => {
    const { server, acme, globex, runs } = await start();
    const mine = await connect(syncUrl(server), bearer(acme));
    mine.send({ type: "session_context", session_id: "shared" });
    expect(await mine.next("session_ready")).toMatchObject({ restored: false, ledger_end: 0 });
    mine.send({ type: "user_intent", request_id: "r1", text: "acme's secret task" });
    expect(await mine.next("agent_result")).toMatchObject({ answer: "acme did: acme's secret task" });

    // The key may also travel as a subprotocol (browsers cannot set Authorization on a WebSocket).
    const theirs = await connect(syncUrl(server), {}, ["ctxkit.sync", `ctxkit.key.${globex}`]);
    theirs.send({ type: "session_context", session_id: "shared" });
    expect(await theirs.next("session_ready")).toMatchObject({
      restored: false,
      ledger_end: 0,
      executor_session_ids: {},
    });
    theirs.send({ type: "user_intent", request_id: "r2", text: "what did acme ask?" });
    expect(await theirs.next("agent_result")).toMatchObject({ answer: "globex did: what did acme ask?" });

    expect(runs.map((entry) => entry.tenant)).toEqual(["acme", "globex"]);
    expect(runs[1]!.run.message).not.toContain("secret");
    expect(runs[1]!.run.executorSessionId).toBeUndefined();
    expect([...(server.sync?.tenants ?? [])].sort()).toEqual(["acme", "globex"]);

    // acme reconnecting finds its own session, executor session included.
    const again = await connect(syncUrl(server), bearer(acme));
    again.send({ type: "session_context", session_id: "shared" });
    const ready = await again.next("session_ready");
    expect(ready).toMatchObject({ restored: true, executor_session_ids: { desktop: "acme-exec" } });
    expect(ready["ledger_end"]).toBeGreaterThan(0);
  });

  it("keeps the sync state in the server's session store: a restarted server restores it (the Contop seed)", async () => {
    const { server, acme, store, keys } = await start();
    const phone = await connect(syncUrl(server), bearer(acme));
    phone.send({ type: "session_context", session_id: "phone-1" });
    await phone.next("session_ready");
    phone.send({ type: "user_intent", request_id: "r1", text: "List files on my desktop" });
    await phone.next("agent_result");
    await server.close();
    running.splice(0);

    // The sync session is a session of its tenant, holding the conversation with its tool-summary prefix.
    const record = await store.getSession(syncSessionId("acme", "phone-1"));
    expect(record).toMatchObject({
      owner: "acme",
      agent: "ctxkit-sync",
      executorSessionIds: { desktop: "acme-exec" },
    });
    const texts = (await store.loadMessages(record!.id)).map(messageText);
    expect(texts).toEqual([
      "List files on my desktop",
      '[desktop used: Called: execute_cli({"command":"ls ~/Desktop"})\nResult: file1.txt]\n\nacme did: List files on my desktop',
    ]);
    expect((await store.listSessions({ owner: "globex" })).sessions).toEqual([]);

    const { server: restarted } = await start({ store, keys });
    const again = await connect(syncUrl(restarted), bearer(acme));
    again.send({ type: "session_context", session_id: "phone-1" });
    expect(await again.next("session_ready")).toMatchObject({
      restored: true,
      ledger_end: 2,
      executor_session_ids: { desktop: "acme-exec" },
    });
  });

  it("deletes no session at start unless told to, then only sync sessions idle for longer than told", async () => {
    const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000);
    let now = daysAgo(8);
    const store = new MemorySessionStore({ clock: () => now });
    const entry = (text: string, role: "user" | "assistant") => ({ role, text, at: now.toISOString() });
    const state = (text: string) => ({
      ...emptyLedgerState(),
      entries: [entry(text, "user"), entry("ok", "assistant")],
    });
    await new TenantSyncStateStore(store, "acme").save("old", state("eight days ago"));
    await store.appendTurn("chat", [
      { role: "user", content: [{ type: "text", text: "a chat, not a sync" }] },
    ]);
    now = daysAgo(6);
    await new TenantSyncStateStore(store, "acme").save("recent", state("six days ago"));
    const { server: keeping } = await start({ store });
    expect(await keeping.sync!.cleaned).toBe(0);
    expect(await store.getSession(syncSessionId("acme", "old"))).toBeDefined();
    const { server } = await start({ store, syncRetentionDays: 7 });
    expect(await server.sync!.cleaned).toBe(1);
    expect(await store.getSession(syncSessionId("acme", "old"))).toBeUndefined();
    expect(await store.getSession(syncSessionId("acme", "recent"))).toBeDefined();
    expect(await store.getSession("chat")).toBeDefined();
  });

  it("mirrors every entry once: after new_session the new conversation, and after an assistant-first backstory", async () => {
    const store = new MemorySessionStore();
    const sync = new TenantSyncStateStore(store, "acme");
    const texts = async (id: string) =>
      (await store.loadMessages(syncSessionId("acme", id))).map((message) => messageText(message));
    const ledger = new ConversationLedger();
    ledger.appendExchange("q1", "a1");
    ledger.appendExchange("q2", "a2");
    await sync.save("s", ledger.toState());
    ledger.reset();
    ledger.appendExchange("new q", "new a");
    await sync.save("s", ledger.toState());
    ledger.appendExchange("next q", "next a");
    await sync.save("s", ledger.toState());
    expect(await texts("s")).toEqual(["q1", "a1", "q2", "a2", "new q", "new a", "next q", "next a"]);

    const backstory = new ConversationLedger({
      state: { ...emptyLedgerState(), entries: [{ role: "assistant", text: "hello from before", at: "t0" }] },
    });
    await sync.save("t", backstory.toState());
    backstory.appendExchange("q", "a");
    await sync.save("t", backstory.toState());
    expect(await texts("t")).toEqual(["[agent-sync session opened]", "hello from before", "q", "a"]);
  });

  it("never mirrors a tenant's sync session into a session of another owner that holds its id", async () => {
    const store = new MemorySessionStore();
    const squatted = syncSessionId("globex", "phone");
    // Only a session made outside the API (or before API ids were scoped) can hold a sync session's id.
    await store.appendTurn(squatted, [{ role: "user", content: [{ type: "text", text: "acme's" }] }], {
      session: { owner: "acme" },
    });
    const state = {
      ...emptyLedgerState(),
      entries: [{ role: "user" as const, text: "globex's secret", at: "t" }],
    };
    await expect(new TenantSyncStateStore(store, "globex").save("phone", state)).rejects.toMatchObject({
      code: "concurrent_write",
    });
    expect(await store.loadMessages(squatted)).toHaveLength(1);
    expect(await store.getSyncState(squatted, "ctxkit.ledger")).toBeUndefined();
  });

  it("without auth, only 127.0.0.1 itself connects: foreign Host or cross-origin pages get 403", async () => {
    const { server, runs } = await start({ auth: false });
    await expect(connect(syncUrl(server), { headers: { host: "evil.example" } })).rejects.toThrow("HTTP 403");
    await expect(connect(syncUrl(server), { origin: "http://evil.example" })).rejects.toThrow("HTTP 403");
    const local = await connect(syncUrl(server), { origin: server.url });
    local.send({ type: "new_session", session_id: "s" });
    await local.next("session_ready");
    local.send({ type: "user_intent", request_id: "r1", text: "hello" });
    expect(await local.next("agent_result")).toMatchObject({ answer: "local did: hello" });
    expect(runs.map((entry) => entry.tenant)).toEqual(["local"]);
  });

  it("closing the server closes open sync connections", async () => {
    const { server, acme } = await start();
    const connection = await connect(syncUrl(server), bearer(acme));
    const closed = new Promise<number>((resolve) => connection.socket.once("close", resolve));
    await server.close();
    running.splice(0);
    expect(await closed).toBeGreaterThan(0);
  });
});
