import { describe, expect, it } from "vitest";
import { ConversationLedger } from "./conversation-ledger.ts";
import type { ConversationResponder } from "./executor.ts";
import type { ServerMessage } from "./protocol.ts";
import { MemorySyncStateStore } from "./sync-state-store.ts";
import { SyncHub } from "./sync-hub.ts";
import type { SyncHubOptions } from "./sync-hub-options.ts";
import { SyncServerSession } from "./sync-server-session.ts";
import { ExecutorDatabase } from "./sync-test-agents.test-helpers.ts";

const chatAgent: ConversationResponder = async ({ messages }) => {
  const last = messages.at(-1)!;
  const text = last.content[0]?.type === "text" ? last.content[0].text : "";
  return { text: `re: ${text}`, toolCalls: [] };
};

function gate() {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { wait: () => promise, open: () => open() };
}

function connect(hub: SyncHub) {
  const received: ServerMessage[] = [];
  const connection = new SyncServerSession(hub, (message) => received.push(message));
  return { connection, received };
}

function hubWith(database: ExecutorDatabase, extra: Partial<SyncHubOptions> = {}) {
  return new SyncHub({
    store: new MemorySyncStateStore(),
    executors: { desktop: database.executor() },
    conversation: chatAgent,
    restoreExecutorSession: database.restore,
    ...extra,
  });
}

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe("SyncServerSession", () => {
  it("answers bad input and unknown targets with typed error messages", async () => {
    const database = new ExecutorDatabase();
    const { connection, received } = connect(hubWith(database, { conversation: undefined }));
    await connection.handle("{ nope");
    await connection.handle(JSON.stringify({ type: "user_intent", request_id: "r0", text: "hi" }));
    await connection.handle(JSON.stringify({ type: "teleport" }));
    await connection.handleMessage({ type: "session_context", session_id: "s" });
    await connection.handleMessage({ type: "user_intent", request_id: "r1", text: "x", agent: "printer" });
    await connection.handleMessage({ type: "conversation_request", request_id: "r2", text: "hi" });
    await connection.settled();
    const errors = received.filter((message) => message.type === "error");
    expect(errors.map((message) => [message.request_id, message.code])).toEqual([
      [undefined, "parse_error"],
      ["r0", "invalid_input"],
      [undefined, "invalid_input"],
      ["r1", "not_found"],
      ["r2", "unsupported"],
    ]);
    expect(errors[3]?.message).toContain("known agents: desktop");
  });

  it("reports a failing or misbehaving executor and records nothing", async () => {
    const store = new MemorySyncStateStore();
    const hub = new SyncHub({
      store,
      executors: {
        broken: async () => {
          throw new Error("disk on fire");
        },
        sloppy: async () => ({ answer: "ok", toolSummary: [], sessionId: "" }),
      },
    });
    const { connection, received } = connect(hub);
    await connection.handleMessage({ type: "session_context", session_id: "s" });
    await connection.handleMessage({ type: "user_intent", request_id: "a", text: "x", agent: "broken" });
    await connection.handleMessage({ type: "user_intent", request_id: "b", text: "x", agent: "sloppy" });
    await connection.settled();
    const errors = received.filter((message) => message.type === "error");
    expect(errors.map((message) => [message.request_id, message.code])).toEqual([
      ["a", "agent_failed"],
      ["b", "invalid_input"],
    ]);
    expect(errors[0]?.message).toBe("disk on fire");
    expect((await store.load("s"))?.entries ?? []).toEqual([]);
  });

  it("a client that reconnects gets the result of a run that finished while it was away", async () => {
    const database = new ExecutorDatabase();
    let current = gate();
    const hub = hubWith(database, { executors: { desktop: database.executor(() => current.wait()) } });
    const first = connect(hub);
    await first.connection.handleMessage({ type: "session_context", session_id: "s" });
    await first.connection.handleMessage({ type: "user_intent", request_id: "r1", text: "List the desktop" });
    await waitFor(() => database.calls.length === 1);
    first.connection.close(); // the network drops mid-run

    // Reattached while it runs: the request is reported in flight and its result arrives here.
    const second = connect(hub);
    await second.connection.handleMessage({ type: "session_context", session_id: "s" });
    expect(second.received.at(-1)).toMatchObject({
      type: "session_ready",
      in_flight: ["r1"],
      restored: true,
    });
    current.open();
    await waitFor(() => second.received.some((message) => message.type === "agent_result"));
    expect(first.received.some((message) => message.type === "agent_result")).toBe(false);
    second.connection.close();

    // A run that ends with no connection attached: its result waits and is replayed ahead of session_ready.
    current = gate();
    const third = connect(hub);
    await third.connection.handleMessage({ type: "session_context", session_id: "s" });
    await third.connection.handleMessage({ type: "user_intent", request_id: "r2", text: "again" });
    await waitFor(() => database.calls.length === 2);
    third.connection.close();
    current.open();
    await waitFor(() => third.connection.session!.hasUndelivered);
    const fourth = connect(hub);
    await fourth.connection.handleMessage({ type: "session_context", session_id: "s" });
    expect(fourth.received.map((message) => message.type)).toEqual(["agent_result", "session_ready"]);
    expect(fourth.received[0]).toMatchObject({ request_id: "r2", session_id: "adk-1" });
    expect(fourth.received[1]).toMatchObject({ in_flight: [] });
  });

  it("sends chat that happened during a run on the next run, never the agent's own exchange", async () => {
    const database = new ExecutorDatabase();
    const running = gate();
    let holdFirst = true;
    const hub = hubWith(database, {
      executors: { desktop: database.executor(() => (holdFirst ? running.wait() : Promise.resolve())) },
    });
    const { connection } = connect(hub);
    await connection.handleMessage({ type: "session_context", session_id: "s" });
    await connection.handleMessage({ type: "user_intent", request_id: "r1", text: "Scan the desktop" });
    await waitFor(() => database.calls.length === 1);
    await connection.handleMessage({ type: "conversation_request", request_id: "c1", text: "Is it done?" });
    await waitFor(() => connection.session!.ledger.end === 2);
    holdFirst = false;
    running.open();
    await connection.settled();
    await connection.handleMessage({ type: "user_intent", request_id: "r2", text: "Delete passwords.txt" });
    await connection.settled();
    expect(database.calls[1]?.message).toBe(
      "[Prior conversation for context]\nUser: Is it done?\nAssistant: re: Is it done?\n[Current request]\nDelete passwords.txt",
    );
  });

  it("restores executor sessions once; a lost one starts over with the whole window", async () => {
    const database = new ExecutorDatabase();
    const store = new MemorySyncStateStore();
    const ledger = new ConversationLedger();
    ledger.appendExchange("Hi", "Hello");
    ledger.recordResult("desktop", { request: "List files", answer: "2 files", executorSessionId: "gone" });
    await store.save("s", ledger.toState());
    const hub = hubWith(database, { store });
    const { connection } = connect(hub);
    await connection.handleMessage({ type: "session_context", session_id: "s" });
    await connection.handleMessage({ type: "user_intent", request_id: "r1", text: "Delete a.txt" });
    await connection.settled();
    expect(database.calls[0]).toMatchObject({ executorSessionId: undefined, restored: false });
    expect(database.calls[0]?.message).toContain(
      "User: Hi\nAssistant: Hello\nUser: List files\nAssistant: 2 files",
    );
    await connection.handleMessage({ type: "user_intent", request_id: "r2", text: "Delete b.txt" });
    await connection.settled();
    expect(database.calls[1]).toMatchObject({
      executorSessionId: "adk-1",
      restored: false,
      message: "Delete b.txt",
    });
  });

  it("uses a client's backstory and executor session only when the server has nothing stored", async () => {
    const database = new ExecutorDatabase();
    const hub = hubWith(database);
    database.sessions.set("adk-phone", { runs: [] });
    const at = "2025-01-01T00:00:00.000Z";
    const { connection, received } = connect(hub);
    await connection.handleMessage({
      type: "session_context",
      session_id: "s",
      executor_session_ids: { desktop: "adk-phone", printer: "ignored" },
      backstory: [
        { role: "user", text: "Hi", at },
        { role: "assistant", text: "Hello", at },
      ],
    });
    expect(received.at(-1)).toMatchObject({
      restored: false,
      ledger_end: 2,
      executor_session_ids: { desktop: "adk-phone" },
    });
    await connection.handleMessage({
      type: "user_intent",
      request_id: "r1",
      text: "List",
      conversation_context: "User: custom",
    });
    await connection.settled();
    expect(database.restores).toEqual(["adk-phone"]);
    expect(database.calls[0]).toMatchObject({
      executorSessionId: "adk-phone",
      restored: true,
      message: "[Prior conversation for context]\nUser: custom\n[Current request]\nList",
    });
  });
});
