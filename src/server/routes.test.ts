import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Message } from "../model/message.ts";
import { readSse } from "./test-support/read-sse.test-helpers.ts";
import {
  startHarness,
  type HarnessOptions,
  type ServerHarness,
} from "./test-support/server-harness.test-helpers.ts";

const harnesses: ServerHarness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((harness) => harness.close()));
});

async function setup(options: HarnessOptions = {}) {
  const harness = await startHarness(options);
  harnesses.push(harness);
  return harness;
}

const json = async <T>(response: Response | Promise<Response>) => (await (await response).json()) as T;

interface SessionBody {
  session: {
    id: string;
    title?: string;
    messageCount: number;
    stored: boolean;
    parentId?: string;
    turnCount: number;
  };
}

async function turn(harness: ServerHarness, id: string, body: unknown, key = harness.acme) {
  const response = await harness.call(`/v1/sessions/${id}/turns`, { method: "POST", json: body, key });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
  return readSse(response);
}

describe("session routes", () => {
  it("create reserves an id until the first turn, which stores it under its title", async () => {
    const harness = await setup({ responses: ["Hello!"] });
    const created = await harness.call("/v1/sessions", {
      method: "POST",
      json: { id: "s1", title: "My chat" },
    });
    expect(created.status).toBe(201);
    expect((await json<SessionBody>(created)).session).toMatchObject({
      id: "s1",
      stored: false,
      messageCount: 0,
    });
    expect((await json<SessionBody>(harness.call("/v1/sessions/s1"))).session.stored).toBe(false);
    expect((await harness.call("/v1/sessions", { method: "POST", json: { id: "s1" } })).status).toBe(409);
    const generated = await json<SessionBody>(harness.call("/v1/sessions", { method: "POST", json: {} }));
    expect(generated.session.id).toMatch(/^ses_/);
    const listed = await json<{ sessions: { id: string }[] }>(harness.call("/v1/sessions"));
    expect(listed.sessions.map((session) => session.id).sort()).toEqual([generated.session.id, "s1"].sort());

    const events = await turn(harness, "s1", { message: "hi there" });
    expect(events.at(-1)?.event).toBe("done");
    const stored = (await json<SessionBody>(harness.call("/v1/sessions/s1"))).session;
    expect(stored).toMatchObject({ stored: true, title: "My chat", messageCount: 2, turnCount: 1 });
  });

  it("renames, forks at a message, exports JSONL, and deletes", async () => {
    const harness = await setup({ responses: ["one", "two"] });
    await turn(harness, "s2", { message: "first question" });
    await turn(harness, "s2", { message: "second question" });
    const renamed = await harness.call("/v1/sessions/s2", { method: "PATCH", json: { title: "Renamed" } });
    expect((await json<SessionBody>(renamed)).session.title).toBe("Renamed");

    const messages = (await json<{ messages: Message[] }>(harness.call("/v1/sessions/s2/messages"))).messages;
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"]);
    const fork = await harness.call("/v1/sessions/s2/fork", {
      method: "POST",
      json: { atSeq: messages[1]!.seq, id: "s2-fork" },
    });
    expect(fork.status).toBe(201);
    expect((await json<SessionBody>(fork)).session).toMatchObject({
      id: "s2-fork",
      parentId: "s2",
      messageCount: 2,
    });
    expect(
      (await harness.call("/v1/sessions/s2/fork", { method: "POST", json: { id: "s2-fork" } })).status,
    ).toBe(409);
    // Without an id, a fork gets a fresh one in the tenant's own space, as a new session does.
    const unnamed = (
      await json<SessionBody>(harness.call("/v1/sessions/s2/fork", { method: "POST", json: {} }))
    ).session;
    expect(unnamed.id).toMatch(/^ses_/);
    expect(await harness.store.getSession(`acme/${unnamed.id}`)).toMatchObject({
      owner: "acme",
      parentId: "acme/s2",
    });
    expect(await harness.store.getSession(unnamed.id)).toBeUndefined();

    const exported = await harness.call("/v1/sessions/s2/export");
    expect(exported.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
    const lines = (await exported.text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string });
    expect(lines[0]?.type).toBe("ctxkit");
    expect(lines.filter((line) => line.type === "message")).toHaveLength(4);

    expect((await harness.call("/v1/sessions/s2", { method: "DELETE" })).status).toBe(204);
    expect((await harness.call("/v1/sessions/s2")).status).toBe(404);
    expect(await harness.store.getSession("acme/s2")).toBeUndefined();
    expect((await harness.call("/v1/sessions/s2-fork")).status).toBe(200);
  });

  it("stats, context (last request, then prepared after a reload), replay, compact and clear", async () => {
    const harness = await setup({ responses: () => "ok ".repeat(50) });
    for (let index = 0; index < 10; index++) {
      await turn(harness, "s3", {
        message: `question ${index} ${"q".repeat(2_400)}`,
        system: "You are a test.",
      });
    }
    const stats = await json<{ stats: { messages: number; contextWindow: number; tokens: number } }>(
      harness.call("/v1/sessions/s3/stats"),
    );
    // The governed view of the last request: everything but its reply.
    expect(stats.stats).toMatchObject({ messages: 19, contextWindow: 16_000 });
    expect(stats.stats.tokens).toBeGreaterThan(0);

    const context = await json<{
      source: string;
      system: string;
      openai: { role: string; content: unknown }[];
      channels: { total: number; currentInput: number };
      tokens: { total: number };
    }>(harness.call("/v1/sessions/s3/context"));
    expect(context.source).toBe("last-request");
    expect(context.system).toBe("You are a test.");
    expect(context.openai).toEqual(harness.upstream.requests[9]!.body.messages);
    expect(context.channels.total).toBe(context.tokens.total);
    expect(context.channels.currentInput).toBeGreaterThan(0);

    const replay = await json<{
      requests: { rawTokens: number; governedTokens: number }[];
      totals: { requests: number };
    }>(harness.call("/v1/sessions/s3/replay"));
    expect(replay.totals.requests).toBe(10);
    expect(replay.requests[9]!.rawTokens).toBeGreaterThan(replay.requests[0]!.rawTokens);

    const compacted = await json<{ events: { type: string }[] }>(
      harness.call("/v1/sessions/s3/compact", { method: "POST", json: { focus: "the questions" } }),
    );
    expect(compacted.events.map((event) => event.type)).toContain("compaction-end");
    const cleared = await harness.call("/v1/sessions/s3/clear", { method: "POST", json: {} });
    expect(cleared.status).toBe(200);
    const visible = (await json<{ messages: Message[] }>(harness.call("/v1/sessions/s3/messages"))).messages;
    expect(visible).toHaveLength(1);
    expect(visible[0]?.kind).toBe("summary");
    const all = await json<{ messages: Message[]; summarizedBy: Record<string, number> }>(
      harness.call("/v1/sessions/s3/messages?strategy=all"),
    );
    expect(all.messages.length).toBeGreaterThan(20);
    expect(Object.keys(all.summarizedBy).length).toBeGreaterThanOrEqual(20);
    // Only the summaries, superseded ones too, without the history they replaced (what the inspector lists).
    const summaries = await harness.call("/v1/sessions/s3/messages?strategy=summaries");
    expect(summaries.status).toBe(200);
    const summaryMessages = ((await summaries.json()) as { messages: Message[] }).messages;
    expect(summaryMessages.length).toBeGreaterThanOrEqual(2);
    expect(summaryMessages).toEqual(all.messages.filter((message) => message.kind === "summary"));
    expect(summaryMessages.every((message) => message.sessionId === "s3")).toBe(true);
    const foreign = await harness.call("/v1/sessions/s3/messages?strategy=summaries", {
      key: harness.globex,
    });
    expect(foreign.status).toBe(404);
    expect((await harness.call("/v1/sessions/s3/messages?strategy=nope")).status).toBe(400);
    const fresh = await json<{ source: string }>(harness.call("/v1/sessions/s3/context"));
    expect(fresh.source).toBe("prepared");
  });
});

describe("turns over Server-Sent Events", () => {
  it("streams governance, deltas and done; tool calls continue with toolResults", async () => {
    const harness = await setup({
      responses: [
        {
          text: "Let me look.",
          reasoning: "need the file",
          toolCalls: [{ id: "call_9", name: "read_file", arguments: { path: "x.ts" } }],
        },
        { text: "x.ts is empty.", chunkSize: 3 },
      ],
    });
    const first = await turn(harness, "t1", {
      message: "what is in x.ts?",
      tools: [{ type: "function", function: { name: "read_file", parameters: { type: "object" } } }],
    });
    expect(first.map((event) => event.event)).toContain("delta");
    expect(first.map((event) => event.event)).toContain("reasoning");
    const done = first.at(-1)!;
    expect(done.event).toBe("done");
    expect(done.data).toMatchObject({
      finishReason: "tool_calls",
      message: {
        role: "assistant",
        content: [
          { type: "reasoning" },
          { type: "text", text: "Let me look." },
          { type: "tool-call", id: "call_9" },
        ],
      },
      session: { id: "t1", messageCount: 2 },
    });
    const second = await turn(harness, "t1", { toolResults: [{ callId: "call_9", content: "" }] });
    const text = second
      .filter((event) => event.event === "delta")
      .map((event) => (event.data as { text: string }).text);
    expect(text.join("")).toBe("x.ts is empty.");
    expect(text.length).toBeGreaterThan(1);
    expect(second.at(-1)?.data).toMatchObject({ finishReason: "stop", session: { messageCount: 4 } });
    expect(harness.upstream.requests[1]?.body.stream).toBe(true);
  });

  it("sends each governance event of the request before the reply", async () => {
    const harness = await setup({ contextWindow: 5_000, responses: () => "fine" });
    let governance: string[] = [];
    for (let index = 0; index < 12 && governance.length === 0; index++) {
      const events = await turn(harness, "t2", { message: `step ${index} ${"w".repeat(2_000)}` });
      governance = events
        .filter((event) => event.event === "governance")
        .map((event) => (event.data as { type: string }).type);
      if (governance.length > 0) expect(events.findIndex((event) => event.event === "governance")).toBe(0);
    }
    expect(governance.length).toBeGreaterThan(0);
  });

  it("answers errors found before the stream as JSON with their status", async () => {
    const harness = await setup();
    const both = await harness.call("/v1/sessions/t3/turns", {
      method: "POST",
      json: { message: "a", toolResults: [{ callId: "c", content: "x" }] },
    });
    expect(both.status).toBe(400);
    const unknownCall = await harness.call("/v1/sessions/t3/turns", {
      method: "POST",
      json: { toolResults: [{ callId: "c", content: "x" }] },
    });
    expect(unknownCall.status).toBe(400);
  });
});

describe("live events, memory and metrics", () => {
  it("GET /v1/events streams the tenant's commits and governance, not other tenants'", async () => {
    const harness = await setup({ responses: () => "ok" });
    const controller = new AbortController();
    const acmeEvents = harness.call("/v1/events", { signal: controller.signal });
    const globexEvents = harness.call("/v1/events", { key: harness.globex, signal: controller.signal });
    const [acme, globex] = await Promise.all([acmeEvents, globexEvents]);
    const reading = readSse(acme, (event) => event.event === "committed");
    const globexReading = readSse(globex).catch(() => []);
    await turn(harness, "e1", { message: "hello" });
    const events = await reading;
    expect(events.at(-1)).toEqual({
      event: "committed",
      data: { sessionId: "e1", messageCount: 2, turnCount: 1 },
    });
    controller.abort();
    expect(await globexReading).toEqual([]);
  });

  it("memory: add, search, get, delete, scoped to the tenant", async () => {
    const harness = await setup();
    const added = await harness.call("/v1/memory", {
      method: "POST",
      json: { kind: "preference", content: "Prefers tabs over spaces" },
    });
    expect(added.status).toBe(201);
    const { memory } = await json<{ memory: { id: string; owner?: string } }>(added);
    expect(memory.owner).toBeUndefined();
    expect((await harness.memory.get(memory.id, { owner: "acme" }))?.content).toBe(
      "Prefers tabs over spaces",
    );
    const hits = await json<{ hits: { memory: { id: string } }[] }>(harness.call("/v1/memory?q=tabs"));
    expect(hits.hits.map((hit) => hit.memory.id)).toEqual([memory.id]);
    const listed = await json<{ memories: unknown[] }>(harness.call("/v1/memory?kind=fact"));
    expect(listed.memories).toEqual([]);
    expect((await harness.call(`/v1/memory/${memory.id}`)).status).toBe(200);
    expect((await harness.call(`/v1/memory/${memory.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await harness.call(`/v1/memory/${memory.id}`)).status).toBe(404);
    expect(
      (await harness.call("/v1/memory", { method: "POST", json: { kind: "nonsense", content: "x" } })).status,
    ).toBe(400);
  });

  it("memory in context (opt-in): the tenant's core memories reach its system prompts, never another tenant's", async () => {
    const harness = await setup({ responses: () => "ok", server: { memoryInContext: true } });
    await harness.call("/v1/memory", {
      method: "POST",
      json: { kind: "preference", content: "Acme prefers metric units" },
    });
    await harness.call("/v1/memory", {
      method: "POST",
      key: harness.globex,
      json: { kind: "preference", content: "Globex prefers imperial units" },
    });
    await turn(harness, "mem-1", { message: "hello", system: "Be brief." });
    const system = harness.upstream.requests[0]!.body.messages![0]!;
    expect(system.role).toBe("system");
    expect(String(system.content)).toContain("Be brief.");
    expect(String(system.content)).toContain("Acme prefers metric units");
    expect(String(system.content)).not.toContain("Globex");

    const plain = await setup({ responses: () => "ok" });
    await plain.call("/v1/memory", {
      method: "POST",
      json: { kind: "preference", content: "Acme prefers metric units" },
    });
    await turn(plain, "mem-2", { message: "hello", system: "Be brief." });
    expect(plain.upstream.requests[0]!.body.messages![0]).toEqual({ role: "system", content: "Be brief." });
  });

  it("memory in context: a session's compaction summary becomes its tenant's memory, shown to its other sessions only", async () => {
    const harness = await setup({ responses: () => "ok ".repeat(50), server: { memoryInContext: true } });
    for (let index = 0; index < 10; index++) {
      await turn(harness, "long-1", { message: `step ${index} of the migration ${"q".repeat(2_400)}` });
    }
    const compacted = await json<{ events: { type: string }[] }>(
      harness.call("/v1/sessions/long-1/compact", { method: "POST", json: {} }),
    );
    expect(compacted.events.map((event) => event.type)).toContain("compaction-end");
    const summaries = await harness.memory.list({ owner: "acme", kinds: ["session-summary"] });
    expect(summaries.length).toBeGreaterThan(0);
    expect(summaries[0]!.sourceSessionId).toBe("acme/long-1");
    expect(await harness.memory.list({ owner: "globex" })).toEqual([]);
    const listed = await json<{ memories: { kind: string }[] }>(
      harness.call("/v1/memory", { key: harness.globex }),
    );
    expect(listed.memories).toEqual([]);

    const before = harness.upstream.requests.length;
    await turn(harness, "acme-other", { message: "what did we do before?" });
    await turn(harness, "globex-own", { message: "what did we do before?" }, harness.globex);
    const [acmeRequest, globexRequest] = harness.upstream.requests.slice(before);
    const summaryText = summaries[0]!.content.slice(0, 40);
    expect(JSON.stringify(acmeRequest!.body.messages)).toContain(summaryText);
    expect(JSON.stringify(globexRequest!.body.messages)).not.toContain(summaryText);
  });

  it("/metrics counts requests by route pattern, upstream calls and governance events, with no ids or keys", async () => {
    const harness = await setup({ responses: () => "ok" });
    await turn(harness, "m1", { message: "hello" });
    await harness.call("/v1/sessions/m1");
    const metrics = await harness.call("/metrics", { key: harness.operator });
    expect(metrics.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await metrics.text();
    expect(text).toContain(
      'ctxkit_http_requests_total{method="GET",route="/v1/sessions/:id",status="200"} 1',
    );
    expect(text).toContain('ctxkit_upstream_requests_total{status="200"} 1');
    expect(text).toMatch(/ctxkit_proxy_overhead_seconds_count \d+/);
    // The process's own metrics (prom-client's defaults) come with ctxkit's.
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    expect(text).not.toContain("m1");
    expect(text).not.toContain("acme");
    expect(text).not.toContain("ctxk_");
    expect((await harness.call("/metrics", { key: null })).status).toBe(401);
  });

  it("publicMetrics opts /metrics out of keys (for a scraper on a private network); without it a tenant's key gets 403", async () => {
    const open = await setup({ server: { publicMetrics: true } });
    for (const key of [null, open.acme, "not-a-key"]) {
      const answer = await open.call("/metrics", { key });
      expect(answer.status).toBe(200);
      expect(await answer.text()).toContain("# TYPE ctxkit_http_requests_total counter");
    }
    const closed = await setup();
    expect((await closed.call("/metrics", { key: closed.acme })).status).toBe(403);
    expect((await closed.call("/metrics", { key: null })).status).toBe(401);
  });

  it("without auth the one local user reads /metrics", async () => {
    const harness = await setup({ server: { auth: false } });
    const answer = await harness.call("/metrics", { key: null });
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain("# TYPE ctxkit_http_requests_total counter");
  });

  it("labels every request by its route pattern when the inspector's catch-all is served too", async () => {
    const webRoot = await mkdtemp(join(tmpdir(), "ctxkit-web-"));
    try {
      await writeFile(join(webRoot, "index.html"), "<!doctype html><title>inspector</title>");
      const harness = await setup({ responses: () => "ok", server: { webRoot } });
      await turn(harness, "m1", { message: "hello" });
      expect((await harness.call("/v1/sessions/m1")).status).toBe(200);
      expect((await harness.call("/v1/sessions")).status).toBe(200);
      expect((await harness.call("/v1/sessions", { key: null })).status).toBe(401);
      expect((await harness.call("/health", { key: null })).status).toBe(200);
      expect((await harness.call("/index.html", { key: null })).status).toBe(200);
      expect((await harness.call("/v1/no-such-route")).status).toBe(404);
      const text = await (await harness.call("/metrics", { key: harness.operator })).text();
      const count = (method: string, route: string, status: number) =>
        `ctxkit_http_requests_total{method="${method}",route="${route}",status="${status}"} 1`;
      expect(text).toContain(count("GET", "/v1/sessions/:id", 200));
      expect(text).toContain(count("GET", "/v1/sessions", 200));
      expect(text).toContain(count("GET", "/v1/sessions", 401));
      expect(text).toContain(count("GET", "/health", 200));
      expect(text).toContain(count("GET", "/*", 200));
      expect(text).toContain(count("GET", "unmatched", 404));
      expect(text).toContain(count("POST", "/v1/sessions/:id/turns", 200));
      expect(harness.logs.some((line) => line.startsWith("GET /v1/sessions/:id 200 "))).toBe(true);
    } finally {
      await rm(webRoot, { recursive: true, force: true });
    }
  });
});
