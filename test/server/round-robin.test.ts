// Three servers on one PostgreSQL (the one the test run starts) behind a round-robin balancer without affinity:
// one client sends one request at a time, each to the next server. Every server acts on the session as the store
// holds it, not on the view it loaded before another server moved it on, so the client is never refused, the
// model is called once per stored turn, and each history is the conversation in order.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { messageText } from "../../src/model/blocks.ts";
import { MemoryKeyStore } from "../../src/server/auth/memory-key-store.ts";
import { startServer, type RunningServer } from "../../src/server/start-server.ts";
import type { SessionStore } from "../../src/store/session-store.ts";
import { openPostgresSessionStore, PostgresTurnLocks } from "../../src/store/postgres/index.ts";
import { waitForTurnLock } from "../../src/server/tenancy/turn-locks.ts";
import { startFakeOpenAIServer, type FakeOpenAIServer } from "../../src/test/fake-openai-server.ts";
import { FakeTokenCounter } from "../../src/test/fake-token-counter.ts";

const INSTANCES = 3;
const TURNS = 9;

let databaseUrl: string;
let upstream: FakeOpenAIServer;
let key: string;
const stores: SessionStore[] = [];
const servers: RunningServer[] = [];
const locks: PostgresTurnLocks[] = [];
/** Milliseconds the upstream takes to answer. */
let upstreamDelay = 0;

/** The text of the last user message of an upstream request, in any of the three APIs. */
function lastQuestion(body: Record<string, unknown>): string {
  const items = body["messages"] ?? body["input"];
  const list = typeof items === "string" ? [{ role: "user", content: items }] : (items as unknown[]);
  const last = [...list].reverse().find((item) => (item as { role?: string }).role === "user") as
    { content: unknown } | undefined;
  const content = last?.content;
  if (typeof content === "string") return content;
  const texts = (content as { text?: string }[] | undefined)?.map((block) => block.text ?? "") ?? [];
  return texts.join("");
}

beforeAll(async () => {
  const admin = new pg.Client({ connectionString: process.env["CTXKIT_TEST_PG_URL"] });
  await admin.connect();
  const database = `round_robin_${Date.now()}_${process.pid}`;
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
  const url = new URL(process.env["CTXKIT_TEST_PG_URL"]!);
  url.pathname = `/${database}`;
  databaseUrl = url.toString();
  upstream = await startFakeOpenAIServer({
    responses: async (request) => {
      await new Promise((resolve) => setTimeout(resolve, upstreamDelay));
      return { text: `re: ${lastQuestion(request.body)}` };
    },
  });
  const keys = new MemoryKeyStore();
  key = (await keys.create("acme")).key;
  for (let index = 0; index < INSTANCES; index++) {
    const store = await openPostgresSessionStore({ connectionString: databaseUrl });
    stores.push(store);
    const turnLocks = new PostgresTurnLocks(databaseUrl);
    locks.push(turnLocks);
    servers.push(
      await startServer({
        store,
        keys,
        turnLocks,
        port: 0,
        upstream: { baseURL: upstream.url, apiKey: "sk-upstream", model: "fake-model" },
        anthropicUpstream: { baseURL: upstream.url, apiKey: "sk-ant-upstream", auth: "x-api-key" },
        engine: { contextWindow: 16_000, maxOutputTokens: 2_000, tokenCounter: new FakeTokenCounter() },
        log: () => undefined,
        webRoot: false,
      }),
    );
  }
});

afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await Promise.all(stores.map((store) => store.close()));
  await Promise.all(locks.map((turnLocks) => turnLocks.close()));
  await upstream.close();
});

/** The next server in turn, as a round-robin balancer picks it. */
const server = (turn: number) => servers[turn % INSTANCES]!;

/** The questions and answers stored in a session, in order. */
async function stored(storeId: string): Promise<string[][]> {
  const messages = await stores[0]!.loadMessages(storeId, { strategy: "all" });
  return messages.map((message) => [message.role, messageText(message)]);
}

const conversationOf = (name: string) =>
  Array.from({ length: TURNS }, (_, turn) => [
    ["user", `${name} ${turn}`],
    ["assistant", `re: ${name} ${turn}`],
  ]).flat();

describe("servers behind a round-robin balancer without affinity", () => {
  it("never refuse a sequential chat completions client, streamed or not, and call the model once per turn", async () => {
    const calls = upstream.requests.length;
    for (let turn = 0; turn < TURNS; turn++) {
      const client = new OpenAI({
        baseURL: `${server(turn).url}/v1`,
        apiKey: key,
        maxRetries: 0,
        defaultHeaders: { "X-Ctxkit-Session": "chat" },
      });
      const messages = [{ role: "user" as const, content: `chat ${turn}` }];
      if (turn % 2 === 0) {
        const answer = await client.chat.completions.create({ model: "m", messages });
        expect(answer.choices[0]?.message.content).toBe(`re: chat ${turn}`);
      } else {
        let text = "";
        const stream = await client.chat.completions.create({ model: "m", messages, stream: true });
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
        expect(text).toBe(`re: chat ${turn}`);
      }
    }
    expect(upstream.requests.length - calls).toBe(TURNS);
    expect(await stored("acme/chat")).toEqual(conversationOf("chat"));
  });

  it("never refuse a sequential Messages client that resends the whole conversation", async () => {
    const calls = upstream.requests.length;
    const history: Anthropic.MessageParam[] = [];
    for (let turn = 0; turn < TURNS; turn++) {
      const client = new Anthropic({
        baseURL: server(turn).url,
        apiKey: key,
        maxRetries: 0,
        defaultHeaders: { "X-Ctxkit-Session": "messages" },
      });
      history.push({ role: "user", content: `messages ${turn}` });
      const request = { model: "claude-test", max_tokens: 100, messages: history };
      const answer =
        turn % 2 === 0
          ? await client.messages.create(request)
          : await client.messages.stream(request).finalMessage();
      const text = answer.content.map((block) => (block.type === "text" ? block.text : "")).join("");
      expect(text).toBe(`re: messages ${turn}`);
      history.push({ role: "assistant", content: text });
    }
    expect(upstream.requests.length - calls).toBe(TURNS);
    expect(await stored("acme/messages")).toEqual(conversationOf("messages"));
  });

  it("never refuse a sequential Responses client chained by previous_response_id", async () => {
    const calls = upstream.requests.length;
    let previous: string | undefined;
    for (let turn = 0; turn < TURNS; turn++) {
      const client = new OpenAI({
        baseURL: `${server(turn).url}/v1`,
        apiKey: key,
        maxRetries: 0,
        defaultHeaders: { "X-Ctxkit-Session": "responses" },
      });
      const request = {
        model: "m",
        input: `responses ${turn}`,
        ...(previous !== undefined && { previous_response_id: previous }),
      };
      let answer: OpenAI.Responses.Response;
      if (turn % 2 === 0) answer = await client.responses.create(request);
      else {
        const stream = client.responses.stream(request);
        answer = await stream.finalResponse();
      }
      expect(answer.output_text).toBe(`re: responses ${turn}`);
      previous = answer.id;
    }
    expect(upstream.requests.length - calls).toBe(TURNS);
    expect(await stored("acme/responses")).toEqual(conversationOf("responses"));
  });

  it("take turns when one session's requests race on two servers: the model is never called for a refused turn", async () => {
    upstreamDelay = 150;
    try {
      const calls = upstream.requests.length;
      const ask = (instance: number, text: string) =>
        new OpenAI({
          baseURL: `${servers[instance]!.url}/v1`,
          apiKey: key,
          maxRetries: 0,
          defaultHeaders: { "X-Ctxkit-Session": "race" },
        }).chat.completions.create({ model: "m", messages: [{ role: "user", content: text }] });
      const answers = await Promise.all([ask(0, "race a"), ask(1, "race b")]);
      expect(answers.map((answer) => answer.choices[0]?.message.content).sort()).toEqual([
        "re: race a",
        "re: race b",
      ]);
      // The second turn waited for the first and was sent upstream with its reply: two calls, two stored turns.
      const sent = upstream.requests.slice(calls);
      expect(sent).toHaveLength(2);
      expect(sent[1]!.body.messages).toHaveLength(3);
      const history = await stored("acme/race");
      expect(history).toHaveLength(4);
      expect(history[1]).toEqual(["assistant", `re: ${history[0]![1]}`]);
      expect(history[3]).toEqual(["assistant", `re: ${history[2]![1]}`]);
    } finally {
      upstreamDelay = 0;
    }
  });

  it("refuse a turn with 409 concurrent_write, naming the client's id, when another server holds the session too long", async () => {
    const other = new PostgresTurnLocks(databaseUrl);
    try {
      const release = await other.tryLock("acme/held");
      expect(release).toBeDefined();
      const refused = await waitForTurnLock(locks[0]!, "acme/held", "held", 50).catch(
        (error: unknown) => error,
      );
      expect(refused).toMatchObject({ status: 409, code: "concurrent_write" });
      expect(String((refused as Error).message)).toContain("session held ");
      await release!();
      const unlock = await waitForTurnLock(locks[0]!, "acme/held", "held", 1_000);
      unlock();
    } finally {
      await other.close();
    }
  });

  it("lose a dead server's turn locks with its connection", async () => {
    const dying = new PostgresTurnLocks(databaseUrl);
    expect(await dying.tryLock("acme/orphan")).toBeDefined();
    expect(await locks[0]!.tryLock("acme/orphan")).toBeUndefined();
    await dying.close();
    const release = await waitForTurnLock(locks[0]!, "acme/orphan", "orphan", 5_000);
    release();
  });
});
