import { afterEach, describe, expect, it } from "vitest";
import { messageText } from "../model/blocks.ts";
import { MemorySessionStore } from "../store/memory/index.ts";
import { rateLimited } from "../test/fake-openai-responses.ts";
import { startHarness, type ServerHarness } from "./test-support/server-harness.test-helpers.ts";

const harnesses: ServerHarness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((harness) => harness.close()));
});

async function setup(options: Parameters<typeof startHarness>[0]) {
  const harness = await startHarness(options);
  harnesses.push(harness);
  return harness;
}

/** A memory store whose writes take a while once `slow` is set (a busy database). */
class SlowStore extends MemorySessionStore {
  slow = false;
  /** The next slow write fails (a database that went away mid-commit). */
  failNext = false;

  override async appendTurn(...args: Parameters<MemorySessionStore["appendTurn"]>) {
    if (this.slow) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      if (this.failNext) {
        this.failNext = false;
        throw new Error("the database went away");
      }
    }
    return super.appendTurn(...args);
  }
}

async function stored(harness: ServerHarness, id: string): Promise<string[]> {
  const rows = await harness.store.loadMessages(`acme/${id}`).catch(() => []);
  return rows.map((message) => `${message.role}:${messageText(message)}`);
}

/** The three stateful routes, each with a request of several user messages in its own format. */
const routes = [
  {
    name: "chat completions",
    path: "/v1/chat/completions",
    body: (texts: readonly string[], stream = false) => ({
      model: "m",
      stream,
      messages: texts.map((text) => ({ role: "user", content: text })),
    }),
    /** Text the client sees before the reply is stored (the stream's end waits for the commit). */
    beforeEnd: '"finish_reason":"stop"',
  },
  {
    name: "Responses",
    path: "/v1/responses",
    body: (texts: readonly string[], stream = false) => ({
      model: "m",
      store: false,
      stream,
      instructions: "You are Codex.",
      input: texts.map((text) => ({
        type: "message",
        role: "user",
        content: [{ type: "input_text", text }],
      })),
    }),
    beforeEnd: "response.output_item.done",
  },
  {
    name: "Anthropic Messages",
    path: "/v1/messages",
    body: (texts: readonly string[], stream = false) => ({
      model: "m",
      max_tokens: 100,
      stream,
      messages: texts.map((text) => ({ role: "user", content: [{ type: "text", text }] })),
    }),
    beforeEnd: "message_delta",
  },
] as const;

describe.each(routes)("$name: a request's messages are stored with its reply or not at all", (route) => {
  it("stores nothing of a request with several user messages whose upstream fails; the retry stores each once", async () => {
    const harness = await setup({ responses: [rateLimited(), "A summary."] });
    const texts = [
      "<environment_context>cwd=/w</environment_context>",
      "Here is the document.",
      "Summarise it.",
    ];
    const send = () =>
      harness.call(route.path, {
        method: "POST",
        headers: { "x-ctxkit-session": "multi" },
        json: route.body(texts),
      });

    const failed = await send();
    expect(failed.status).toBe(429);
    await failed.text();
    expect(await stored(harness, "multi")).toEqual([]);

    const retried = await send();
    expect(retried.status).toBe(200);
    await retried.text();
    expect(await stored(harness, "multi")).toEqual([
      ...texts.map((text) => `user:${text}`),
      "assistant:A summary.",
    ]);
    // The upstream got each message once on the retry.
    const sent = JSON.stringify(harness.upstream.requests[1]!.body);
    for (const text of texts) expect(sent.split(JSON.stringify(text).slice(1, -1)).length - 1).toBe(1);
  });

  /** Streams `first`, leaves once the reply is being stored (slowly), then sends `second` at once. */
  async function leaveDuringCommit(harness: ServerHarness): Promise<void> {
    const controller = new AbortController();
    const response = await harness.call(route.path, {
      method: "POST",
      headers: { "x-ctxkit-session": "leaving" },
      json: route.body(["first"], true),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let seen = "";
    while (!seen.includes(route.beforeEnd)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended before ${route.beforeEnd}: ${seen}`);
      seen += decoder.decode(value, { stream: true });
    }
    controller.abort();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const retry = await harness.call(route.path, {
      method: "POST",
      headers: { "x-ctxkit-session": "leaving" },
      json: route.body(["second"]),
    });
    expect(retry.status).toBe(200);
    await retry.text();
  }

  it("holds the session until a streamed reply is committed when the client leaves during the commit", async () => {
    const store = new SlowStore();
    const harness = await setup({ store, responses: (request) => `reply ${request.index}` });
    store.slow = true;
    await leaveDuringCommit(harness);
    // The retry waited for the commit: the upstream got the first turn, and both turns are stored in order.
    expect(JSON.stringify(harness.upstream.requests[1]!.body)).toContain("reply 0");
    expect(await stored(harness, "leaving")).toEqual([
      "user:first",
      "assistant:reply 0",
      "user:second",
      "assistant:reply 1",
    ]);
    expect(harness.logs.filter((line) => /error/i.test(line))).toEqual([]);
  });

  it("a commit that fails after the client left stores nothing, and the retry sees nothing of it", async () => {
    const store = new SlowStore();
    const harness = await setup({ store, responses: (request) => `reply ${request.index}` });
    store.slow = true;
    store.failNext = true;
    await leaveDuringCommit(harness);
    expect(JSON.stringify(harness.upstream.requests[1]!.body)).not.toContain("first");
    expect(await stored(harness, "leaving")).toEqual(["user:second", "assistant:reply 1"]);
    expect(harness.logs.join("\n")).not.toMatch(/Controller is already closed/);
  });
});
