import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Message } from "../model/message.ts";
import { SyncClient, type SyncClientStatus } from "./client.ts";
import { JsonFileSyncStateStore } from "./json-file-sync-state-store.ts";
import { SYNC_SUBPROTOCOL } from "./protocol.ts";
import { MemorySyncStateStore, type SyncStateStore } from "./sync-state-store.ts";
import { cliConversationAgent, ExecutorDatabase } from "./sync-test-agents.test-helpers.ts";
import { attachSyncEndpoint, type SyncEndpoint, type SyncEndpointOptions } from "./websocket-endpoint.ts";

interface Running {
  server: Server;
  endpoint: SyncEndpoint;
  port: number;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Listens on `port`; rejects (instead of throwing from the server) when it is taken. */
function listen(server: Server, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/**
 * A server on `port`, or on a free port below the ephemeral range: a restart listens on the same port again, and
 * a port the system handed out could be handed to another test's listener in between (EADDRINUSE).
 */
async function startServer(options: Omit<SyncEndpointOptions, "path">, port?: number): Promise<Running> {
  const server = createServer((_request, response) => response.writeHead(404).end());
  const endpoint = attachSyncEndpoint(server, { path: "/sync", ...options });
  // The same port again (a restart) is retried for a while: a port just closed can still be held briefly.
  for (let attempt = 0; ; attempt++) {
    try {
      await listen(server, port ?? 20_000 + Math.floor(Math.random() * 12_000));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE" || attempt >= 40) throw error;
      if (port !== undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const running = { server, endpoint, port: (server.address() as AddressInfo).port };
  cleanups.push(() => stopServer(running));
  return running;
}

async function stopServer(running: Running): Promise<void> {
  if (!running.server.listening) return;
  await running.endpoint.close();
  running.server.closeAllConnections();
  await new Promise<void>((resolve) => running.server.close(() => resolve()));
}

function connectClient(
  port: number,
  extra: Partial<ConstructorParameters<typeof SyncClient>[0]> = {},
): SyncClient {
  const client = new SyncClient({
    url: `ws://127.0.0.1:${port}/sync`,
    reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
    ...extra,
  });
  cleanups.push(async () => client.close());
  return client;
}

async function stateFile(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), "ctxkit-sync-ws-"));
  cleanups.push(() => rm(directory, { recursive: true, force: true }));
  return join(directory, "sync-state.json");
}

function serverOptions(database: ExecutorDatabase, store: SyncStateStore, seen: (readonly Message[])[] = []) {
  return {
    store,
    executors: { desktop: database.executor() },
    conversation: cliConversationAgent(seen),
    restoreExecutorSession: database.restore,
    discardExecutorSession: database.discard,
    ledger: { labels: { assistant: "Contop" }, agentLabels: { desktop: "Desktop agent" } },
  };
}

describe("sync over WebSocket", () => {
  it("runs the seed's 4 turns; after a server restart the executor continues its session with no resend", async () => {
    const file = await stateFile();
    const database = new ExecutorDatabase(); // the executor's own session store outlives the server
    const seen: (readonly Message[])[] = [];
    const first = await startServer(serverOptions(database, new JsonFileSyncStateStore(file), seen));
    const statuses: SyncClientStatus[] = [];
    const client = connectClient(first.port, {
      sessionId: "phone-1",
      onStatus: (status) => statuses.push(status),
    });
    expect((await client.connect()).restored).toBe(false);

    // The seed's offsets table, read from the persisted state after each turn: 0, 4, 4, 8.
    const offset = async () =>
      (await new JsonFileSyncStateStore(file).load("phone-1"))?.cursors["desktop"] ?? 0;

    // Turn 1: chat. Turn 2: classified as desktop work and run by the executor.
    expect(await client.ask("What's the weather?")).toEqual({
      kind: "chat",
      text: "Chat reply to: What's the weather?",
    });
    expect(await offset()).toBe(0);
    const deltas: string[] = [];
    const turn2 = await client.ask("Check desktop for security risks", {
      onDelta: (delta) => deltas.push(delta),
    });
    expect(turn2.kind).toBe("agent");
    expect(deltas).toContain("working… ");
    expect(database.calls[0]?.message).toBe(
      "[Prior conversation for context]\nUser: What's the weather?\nContop: Chat reply to: What's the weather?\n" +
        "[Current request]\nCheck desktop for security risks",
    );
    expect(database.calls[0]?.executorSessionId).toBeUndefined();
    expect(client.executorSessionIds).toEqual({ desktop: "adk-1" });
    expect(await offset()).toBe(4);
    // Turn 3: chat; the conversation agent sees the executor's tool-summary prefix.
    expect((await client.ask("How are you?")).kind).toBe("chat");
    const lastSeen = seen.at(-1)!;
    expect(lastSeen[3]?.content).toEqual([
      {
        type: "text",
        text:
          '[Desktop agent used: Called: execute_cli({"command":"ls ~/Desktop"})\nResult: passwords.txt notes.md]\n\n' +
          "I found passwords.txt on your desktop.",
      },
    ]);
    expect(await offset()).toBe(4);

    // The server restarts: a new process-like server on the same port and the same state file.
    await stopServer(first);
    const second = await startServer(
      serverOptions(database, new JsonFileSyncStateStore(file), seen),
      first.port,
    );
    const ready = await client.connect();
    expect(ready.restored).toBe(true);
    expect(ready.ledger_end).toBe(6);
    expect(statuses).toContain("reconnecting");

    // Turn 4: the executor gets exactly turn 3 and continues its restored session.
    const turn4 = await client.ask("Delete that passwords file");
    expect(turn4.kind === "agent" && turn4.result.tool_summary[0]?.input).toEqual({
      command: "rm ~/Desktop/passwords.txt",
    });
    expect(database.restores).toEqual(["adk-1"]);
    expect(database.calls[1]).toEqual({
      intent: "Delete that passwords file",
      executorSessionId: "adk-1",
      restored: true,
      message:
        "[Prior conversation for context]\nUser: How are you?\nContop: Chat reply to: How are you?\n" +
        "[Current request]\nDelete that passwords file",
      historyBefore: 1,
    });
    expect(database.sessions.get("adk-1")?.runs.map((run) => run.calls[0]?.input)).toEqual([
      { command: "ls ~/Desktop" },
      { command: "rm ~/Desktop/passwords.txt" },
    ]);
    const state = await new JsonFileSyncStateStore(file).load("phone-1");
    expect(state?.cursors).toEqual({ desktop: 8 });
    // No resend: across both runs the executor received each of turns 1–3 exactly once.
    const received = database.calls.map((call) => call.message).join("\n");
    for (const text of [
      "User: What's the weather?",
      "Check desktop for security risks",
      "User: How are you?",
    ]) {
      expect(received.split(text).length - 1).toBe(1);
    }
    expect(state?.entries).toHaveLength(8);
    expect(second.endpoint.connectionCount).toBe(1);
  });

  it("new session resets the ledger, the cursors and the executor session", async () => {
    const database = new ExecutorDatabase();
    const store = new MemorySyncStateStore();
    const running = await startServer(serverOptions(database, store));
    const client = connectClient(running.port, { sessionId: "old" });
    await client.connect();
    await client.ask("What's the weather?");
    await client.runIntent("List the desktop files");
    const ready = await client.newSession("fresh");
    expect(ready).toMatchObject({
      session_id: "fresh",
      executor_session_ids: {},
      ledger_end: 0,
      restored: false,
    });
    await client.runIntent("List the desktop files again");
    expect(database.calls[1]).toMatchObject({
      executorSessionId: undefined,
      message: "List the desktop files again",
    });
    expect(client.executorSessionIds).toEqual({ desktop: "adk-2" });
    expect((await store.load("fresh"))?.entries).toHaveLength(2);
    expect((await store.load("old"))?.entries).toHaveLength(4); // the old session stays resumable

    // new_session on an existing id discards its executor session and empties it.
    await client.newSession("old");
    expect(database.discarded).toEqual(["adk-1"]);
    expect(await store.load("old")).toMatchObject({
      entries: [],
      cursors: {},
      executorSessionIds: {},
      dropped: 0,
    });
  });

  it("rejects a request the restarted server lost, and refuses unauthorised upgrades", async () => {
    const database = new ExecutorDatabase();
    let release: () => void = () => undefined;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const store = new MemorySyncStateStore();
    const first = await startServer({
      ...serverOptions(database, store),
      executors: { desktop: database.executor(() => blocked) },
    });
    const client = connectClient(first.port, { sessionId: "s" });
    await client.connect();
    const lost = client.runIntent("List the desktop files");
    while (database.calls.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await stopServer(first);
    release();
    await startServer(serverOptions(database, store), first.port);
    await expect(lost).rejects.toMatchObject({ code: "network_error" });
    // The client works again on the new server.
    expect((await client.runIntent("List the desktop files")).answer).toBe(
      "I found passwords.txt on your desktop.",
    );

    const guarded = await startServer({ ...serverOptions(database, store), authorize: () => false });
    const refused = connectClient(guarded.port, { reconnect: { maxAttempts: 0 } });
    await expect(refused.connect()).rejects.toMatchObject({ code: "network_error" });
  });

  it("a server that lost its state resumes from what the app saved: transcript and executor session id", async () => {
    const database = new ExecutorDatabase();
    const first = await startServer(serverOptions(database, new MemorySyncStateStore()));
    const phone = connectClient(first.port, { sessionId: "s" });
    await phone.connect();
    await phone.ask("What's the weather?");
    await phone.ask("Check desktop for security risks");
    await phone.ask("How are you?");
    // What the app persists (Contop: SessionMeta.adkSessionId and the execution entries).
    const saved = { transcript: [...phone.transcript], executorSessionIds: phone.executorSessionIds };
    expect(saved.transcript.map((entry) => [entry.role, entry.agent])).toEqual([
      ["user", undefined],
      ["assistant", undefined],
      ["user", "desktop"],
      ["assistant", "desktop"],
      ["user", undefined],
      ["assistant", undefined],
    ]);
    phone.close();
    await stopServer(first);

    // A new server with an empty state store; the app restarts and continues the session.
    const second = await startServer(serverOptions(database, new MemorySyncStateStore()));
    const restarted = connectClient(second.port, { sessionId: "s", ...saved });
    const ready = await restarted.connect();
    expect(ready).toMatchObject({
      restored: false,
      ledger_end: 6,
      executor_session_ids: { desktop: "adk-1" },
    });
    await restarted.ask("Delete that passwords file");
    expect(database.restores).toEqual(["adk-1"]);
    // The restored executor session holds its own exchange: it gets the chat around it, not its run again.
    expect(database.calls[1]).toMatchObject({
      executorSessionId: "adk-1",
      restored: true,
      historyBefore: 1,
      message:
        "[Prior conversation for context]\nUser: What's the weather?\nContop: Chat reply to: What's the weather?\n" +
        "User: How are you?\nContop: Chat reply to: How are you?\n[Current request]\nDelete that passwords file",
    });
  });

  it("authorises a key carried as a subprotocol and selects ctxkit.sync, never echoing the key", async () => {
    const database = new ExecutorDatabase();
    const running = await startServer({
      ...serverOptions(database, new MemorySyncStateStore()),
      authorize: (request) =>
        (request.headers["sec-websocket-protocol"] ?? "").split(/,\s*/).includes("ctxkit.key.secret-1"),
    });
    const client = connectClient(running.port, { sessionId: "s", apiKey: "secret-1" });
    expect((await client.connect()).session_id).toBe("s");
    expect((await client.runIntent("List the desktop files")).answer).toBe(
      "I found passwords.txt on your desktop.",
    );
    const wrongKey = connectClient(running.port, { apiKey: "guess", reconnect: { maxAttempts: 0 } });
    await expect(wrongKey.connect()).rejects.toMatchObject({ code: "network_error" });

    const raw = new WebSocket(`ws://127.0.0.1:${running.port}/sync`, [
      "ctxkit.key.secret-1",
      SYNC_SUBPROTOCOL,
    ]);
    cleanups.push(async () => raw.close());
    await new Promise((resolve, reject) => {
      raw.addEventListener("open", resolve);
      raw.addEventListener("error", reject);
    });
    expect(raw.protocol).toBe(SYNC_SUBPROTOCOL);
  });
});
