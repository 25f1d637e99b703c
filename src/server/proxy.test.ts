import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { messageText, toolCallsOf, toolResultsOf } from "../model/blocks.ts";
import { MemorySessionStore } from "../store/memory/index.ts";
import type { SessionRecord } from "../store/session-store.ts";
import { contextLengthExceeded } from "../test/fake-openai-responses.ts";
import { startHarness, type ServerHarness } from "./test-support/server-harness.test-helpers.ts";
import { preset } from "../governance/presets.ts";

const harnesses: ServerHarness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((harness) => harness.close()));
});

async function setup(options: Parameters<typeof startHarness>[0]) {
  const harness = await startHarness(options);
  harnesses.push(harness);
  const client = (session?: string, key = harness.acme) =>
    new OpenAI({
      baseURL: `${harness.server.url}/v1`,
      apiKey: key,
      maxRetries: 0,
      ...(session !== undefined && { defaultHeaders: { "X-Ctxkit-Session": session } }),
    });
  return { harness, client };
}

const tools = [
  {
    type: "function" as const,
    function: { name: "read_file", parameters: { type: "object", properties: { path: { type: "string" } } } },
  },
];

/** A store that counts the session records read from it. */
class CountingStore extends MemorySessionStore {
  reads = 0;
  override getSession(sessionId: string): Promise<SessionRecord | undefined> {
    this.reads++;
    return super.getSession(sessionId);
  }
}

describe("the OpenAI-compatible proxy, with the official openai client", () => {
  it("reads the session record twice per turn of a live session: the commit's own record serves what follows", async () => {
    const store = new CountingStore();
    const { client } = await setup({
      store,
      responses: [
        { text: "Hi.", usage: { promptTokens: 10, completionTokens: 1 } },
        { text: "Again.", usage: { promptTokens: 20, completionTokens: 1 } },
      ],
    });
    const openai = client("counted");
    await openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "Hello." }] });
    store.reads = 0;
    const second = await openai.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "Hello again." }],
    });
    expect(second.choices[0]?.message.content).toBe("Again.");
    // The directory's ownership check and the lease's check that no other server moved the session on; the
    // turn's stored record is not read back.
    expect(store.reads).toBe(2);
    expect((await store.getSession("acme/counted"))?.messageCount).toBe(4);
  });

  it("stateful, non-streaming: appends only the new messages, governs the whole history, stores reply and usage", async () => {
    const { harness, client } = await setup({
      responses: [
        { text: "Hi Ada.", usage: { promptTokens: 30, completionTokens: 3 } },
        { text: "Your name is Ada.", usage: { promptTokens: 50, completionTokens: 5 } },
      ],
    });
    const openai = client("chat-1");
    const system = { role: "system" as const, content: "You are terse." };
    const first = await openai.chat.completions.create({
      model: "whatever-the-client-says",
      messages: [system, { role: "user", content: "I am Ada." }],
    });
    expect(first.choices[0]?.message.content).toBe("Hi Ada.");
    const second = await openai.chat.completions.create({
      model: "whatever-the-client-says",
      messages: [system, { role: "user", content: "What is my name?" }],
    });
    expect(second.choices[0]?.message.content).toBe("Your name is Ada.");

    // The upstream saw the server's model and the whole governed history, system prompt first.
    const sent = harness.upstream.requests[1]!.body;
    expect(sent.model).toBe("fake-model");
    expect(sent.messages).toEqual([
      { role: "system", content: "You are terse." },
      { role: "user", content: "I am Ada." },
      { role: "assistant", content: "Hi Ada." },
      { role: "user", content: "What is my name?" },
    ]);
    const stored = await harness.store.loadMessages("acme/chat-1");
    expect(stored.map((message) => [message.role, messageText(message)])).toEqual([
      ["user", "I am Ada."],
      ["assistant", "Hi Ada."],
      ["user", "What is my name?"],
      ["assistant", "Your name is Ada."],
    ]);
    expect(stored[3]?.usage).toEqual({ input: 50, output: 5 });
    const record = await harness.store.getSession("acme/chat-1");
    expect(record?.owner).toBe("acme");
    expect(record?.usage.input).toBe(80);
  });

  it("stateful, streaming: relays the upstream's events unchanged and stores the rebuilt reply", async () => {
    const { harness, client } = await setup({
      responses: [{ text: "A streamed answer, in pieces.", chunkSize: 4 }],
    });
    const stream = await client("stream-1").chat.completions.create({
      model: "m",
      stream: true,
      messages: [{ role: "user", content: "Stream please" }],
    });
    const pieces: string[] = [];
    let sawUsageChunk = false;
    for await (const chunk of stream) {
      if (chunk.choices.length === 0) sawUsageChunk = true;
      pieces.push(chunk.choices[0]?.delta.content ?? "");
    }
    expect(pieces.join("")).toBe("A streamed answer, in pieces.");
    expect(pieces.filter((piece) => piece !== "").length).toBeGreaterThan(3);
    // The proxy asked for usage to record it, but the client did not ask: it never saw the usage chunk.
    expect(sawUsageChunk).toBe(false);
    expect(harness.upstream.requests[0]?.body.stream_options).toEqual({ include_usage: true });
    const stored = await harness.store.loadMessages("acme/stream-1");
    expect(messageText(stored[1]!)).toBe("A streamed answer, in pieces.");
    expect(stored[1]?.usage?.output).toBeGreaterThan(0);
  });

  it("forwards the usage chunk when the client asks for it", async () => {
    const { client } = await setup({
      responses: [{ text: "ok", usage: { promptTokens: 9, completionTokens: 1 } }],
    });
    const stream = await client("usage-1").chat.completions.create({
      model: "m",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "hi" }],
    });
    let usage: unknown;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    expect(usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 1 });
  });

  it.each([false, true])(
    "tool calls across requests (stream: %s): the client sends only the tool results",
    async (streaming) => {
      const { harness, client } = await setup({
        responses: [
          { toolCalls: [{ id: "call_1", name: "read_file", arguments: { path: "a.ts" } }] },
          { text: "a.ts exports main()." },
        ],
      });
      const openai = client(`tools-${streaming}`);
      const ask = async (messages: OpenAI.Chat.ChatCompletionMessageParam[]) => {
        if (!streaming)
          return (await openai.chat.completions.create({ model: "m", tools, messages })).choices[0]!.message;
        const runner = openai.chat.completions.stream({ model: "m", tools, messages });
        return (await runner.finalChatCompletion()).choices[0]!.message;
      };
      const first = await ask([{ role: "user", content: "What does a.ts export?" }]);
      expect(first.tool_calls?.[0]).toMatchObject({
        id: "call_1",
        function: { name: "read_file", arguments: '{"path":"a.ts"}' },
      });
      const second = await ask([
        { role: "tool", tool_call_id: "call_1", content: "export function main() {}" },
      ]);
      expect(second.content).toBe("a.ts exports main().");

      const sent = harness.upstream.requests[1]!.body.messages!;
      expect(sent.map((message) => message.role)).toEqual(["user", "assistant", "tool"]);
      expect(sent[1]).toMatchObject({ tool_calls: [{ id: "call_1", function: { name: "read_file" } }] });
      const stored = await harness.store.loadMessages(`acme/tools-${streaming}`);
      expect(stored.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"]);
      expect(toolCallsOf(stored[1]!)[0]).toMatchObject({
        id: "call_1",
        name: "read_file",
        input: { path: "a.ts" },
      });
      expect(toolResultsOf(stored[2]!)[0]).toMatchObject({ callId: "call_1", toolName: "read_file" });
    },
  );

  it("refuses tool results that answer no call, or a call already answered, and stores nothing of them", async () => {
    const { harness, client } = await setup({
      responses: [
        { toolCalls: [{ id: "call_1", name: "read_file", arguments: {} }] },
        { text: "done" },
        { text: "grepped" },
      ],
    });
    const openai = client("strict-1");
    await openai.chat.completions.create({ model: "m", tools, messages: [{ role: "user", content: "go" }] });
    await expect(
      openai.chat.completions.create({
        model: "m",
        messages: [{ role: "tool", tool_call_id: "call_x", content: "?" }],
      }),
    ).rejects.toMatchObject({ status: 400, code: "invalid_input" });
    await openai.chat.completions.create({
      model: "m",
      messages: [{ role: "tool", tool_call_id: "call_1", content: "ok" }],
    });
    await expect(
      openai.chat.completions.create({
        model: "m",
        messages: [{ role: "tool", tool_call_id: "call_1", content: "ok" }],
      }),
    ).rejects.toMatchObject({ status: 400 });
    expect((await harness.store.loadMessages("acme/strict-1")).length).toBe(4);
    expect(harness.upstream.requests).toHaveLength(2);

    // Within one request a result may answer a call sent in that request, once.
    const call = (id: string): OpenAI.Chat.ChatCompletionMessageParam => ({
      role: "assistant",
      content: null,
      tool_calls: [{ id, type: "function", function: { name: "grep", arguments: "{}" } }],
    });
    await expect(
      openai.chat.completions.create({
        model: "m",
        messages: [
          call("call_2"),
          { role: "tool", tool_call_id: "call_2", content: "a" },
          { role: "tool", tool_call_id: "call_2", content: "b" },
        ],
      }),
    ).rejects.toMatchObject({ status: 400 });
    expect((await harness.store.loadMessages("acme/strict-1")).length).toBe(4);
    await openai.chat.completions.create({
      model: "m",
      messages: [call("call_3"), { role: "tool", tool_call_id: "call_3", content: "found" }],
    });
    const stored = await harness.store.loadMessages("acme/strict-1");
    expect(stored.slice(4).map((message) => message.role)).toEqual(["assistant", "tool", "assistant"]);
    expect(stored[5]?.content).toMatchObject([{ type: "tool-result", callId: "call_3", toolName: "grep" }]);
  });

  it("stateless mode governs the full list and stores nothing", async () => {
    const { harness, client } = await setup({ responses: ["first", "second"] });
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
      { role: "system", content: "Be brief." },
      { role: "user", content: "one" },
      { role: "assistant", content: "1" },
      { role: "user", content: "two" },
    ];
    const plain = await client().chat.completions.create({ model: "m", messages });
    expect(plain.choices[0]?.message.content).toBe("first");
    const explicit = await new OpenAI({
      baseURL: `${harness.server.url}/v1`,
      apiKey: harness.acme,
      maxRetries: 0,
      defaultHeaders: { "X-Ctxkit-Session": "ignored", "X-Ctxkit-Mode": "stateless" },
    }).chat.completions.create({ model: "m", messages });
    expect(explicit.choices[0]?.message.content).toBe("second");
    expect(harness.upstream.requests[0]?.body.messages).toEqual(messages);
    expect((await harness.store.listSessions()).sessions).toHaveLength(0);
  });

  it("offloads old tool outputs with a notice its client can act on: no recall tool it does not have", async () => {
    const { harness, client } = await setup({
      contextWindow: 16_000,
      pipeline: preset("default", {
        cacheAware: false,
        offloadProtectTokens: 500,
        offloadMinPrunableTokens: 1_000,
      }),
      responses: (request) =>
        request.index < 8
          ? {
              toolCalls: [
                { id: `call_${request.index}`, name: "read_file", arguments: { path: `f${request.index}` } },
              ],
            }
          : { text: "done" },
    });
    const openai = client("offloads-1");
    let messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: "Read the files." }];
    for (let round = 0; round < 9; round++) {
      const reply = (await openai.chat.completions.create({ model: "m", tools, messages })).choices[0]!
        .message;
      const call = reply.tool_calls?.[0];
      if (call === undefined) break;
      const listing = Array.from(
        { length: 120 },
        (_, line) => `f${round} line ${line}: const v${line} = ${line};`,
      );
      messages = [{ role: "tool", tool_call_id: call.id, content: listing.join("\n") }];
    }
    const sent = harness.upstream.requests.map((request) => JSON.stringify(request.body.messages));
    expect(sent.some((body) => body.includes("output offloaded"))).toBe(true);
    expect(sent.some((body) => /run \w+\(.*\) again if you need it/.test(body))).toBe(true);
    expect(sent.every((body) => !body.includes("recall_tool_output"))).toBe(true);
  });

  it("compacts long sessions so every request fits the window, and keeps the originals in the store", async () => {
    const { harness, client } = await setup({
      contextWindow: 6_000,
      responses: () => ({ text: "noted: " + "z".repeat(600) }),
    });
    const openai = client("long-1");
    for (let turn = 0; turn < 30; turn++) {
      await openai.chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: `turn ${turn} ${"y".repeat(1_200)}` }],
      });
    }
    const sizes = harness.upstream.requests.map((request) => JSON.stringify(request.body.messages).length);
    expect(Math.max(...sizes)).toBeLessThan(6_000 * 4);
    const visible = await harness.store.loadMessages("acme/long-1");
    expect(visible.some((message) => message.kind === "summary")).toBe(true);
    expect(
      (await harness.store.loadMessages("acme/long-1", { strategy: "all" })).filter(
        (m) => m.kind === undefined,
      ),
    ).toHaveLength(60);
  });

  it("the CowAgent seed: an upstream overflow trims the view to the last 5 turns and retries once", async () => {
    let refused = false;
    const { harness, client } = await setup({
      responses: (request) => {
        if (request.index === 7 && !refused) {
          refused = true;
          return contextLengthExceeded();
        }
        return { text: `reply ${request.index}` };
      },
    });
    const openai = client("overflow-trim");
    for (let turn = 0; turn < 7; turn++) {
      await openai.chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: `turn ${turn}` }],
      });
    }
    const answer = await openai.chat.completions.create({
      model: "m",
      messages: [{ role: "user", content: "turn 7" }],
    });
    expect(answer.choices[0]?.message.content).toBe("reply 8");
    const [refusedRequest, retried] = harness.upstream.requests.slice(7);
    expect(refusedRequest!.body.messages).toHaveLength(15);
    expect(
      retried!.body.messages!.filter((message) => message.role === "user").map((m) => m.content),
    ).toEqual(["turn 3", "turn 4", "turn 5", "turn 6", "turn 7"]);
    // Only the governed view was cut: the store keeps every turn, the recovered one included.
    expect(await harness.store.loadMessages("acme/overflow-trim")).toHaveLength(16);
  });

  it("recovers from an upstream overflow by trimming, then clearing; a third overflow is a 400 context_overflow", async () => {
    const { harness, client } = await setup({
      responses: (request) =>
        request.index >= 4 ? contextLengthExceeded() : { text: `reply ${request.index}` },
    });
    const openai = client("overflow-1");
    for (let turn = 0; turn < 4; turn++) {
      await openai.chat.completions.create({
        model: "m",
        messages: [{ role: "user", content: `turn ${turn}` }],
      });
    }
    await expect(
      openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "too big now" }] }),
    ).rejects.toMatchObject({ status: 400, code: "context_overflow", type: "invalid_request_error" });
    // 4 answered, then the failed request, its retry once trimmed and its retry once cleared
    expect(harness.upstream.requests).toHaveLength(7);
    const stored = await harness.store.loadMessages("acme/overflow-1", { strategy: "all" });
    expect(stored.some((message) => messageText(message) === "too big now")).toBe(false);
  });
});
