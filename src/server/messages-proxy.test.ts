import Anthropic from "@anthropic-ai/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { countAnthropicBreakpoints } from "../formats/providers/anthropic/index.ts";
import { toolCallsOf } from "../model/blocks.ts";
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
  const client = (headers: Record<string, string> = {}, key = harness.acme) =>
    new Anthropic({ baseURL: harness.server.url, apiKey: key, maxRetries: 0, defaultHeaders: headers });
  return { harness, client };
}

type Json = Record<string, unknown>;

const system = [
  { type: "text" as const, text: "x-billing: cc_version=1" },
  { type: "text" as const, text: "You are a coding agent.", cache_control: { type: "ephemeral" as const } },
];
const tools = [
  {
    name: "Read",
    description: "Reads a file",
    input_schema: { type: "object" as const, properties: { path: { type: "string" } } },
  },
];

/** A Claude Code-like history: the task, an environment system message, then `steps` file reads. */
function conversation(steps: number): Json[] {
  const messages: Json[] = [
    { role: "user", content: [{ type: "text", text: "Find the bug in the parser." }] },
    { role: "system", content: [{ type: "text", text: "# Environment\nPrimary working directory: /w" }] },
  ];
  for (let step = 0; step < steps; step++) {
    const id = `toolu_${step}`;
    messages.push({
      role: "assistant",
      content: [
        { type: "thinking", thinking: `Read file ${step} next.`, signature: `sig-${step}` },
        { type: "tool_use", id, name: "Read", input: { path: `src/file${step}.ts` } },
      ],
    });
    const output = Array.from({ length: 80 }, (_, line) => `${line}: const value${line} = parse(${step});`);
    messages.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: id, content: output.join("\n") }],
    });
  }
  return messages;
}

/** A reply that used Anthropic's web search: the server tool's call and result, then the answer. */
const webSearchReply = [
  {
    type: "server_tool_use",
    id: "srvtoolu_1",
    name: "web_search",
    input: { query: "paris weather" },
    caller: { type: "direct" },
  },
  {
    type: "web_search_tool_result",
    tool_use_id: "srvtoolu_1",
    content: [
      {
        type: "web_search_result",
        url: "https://weather.example/paris",
        title: "Paris weather",
        encrypted_content: "EqQBCkYIBxgCIkA",
        page_age: null,
      },
    ],
  },
  { type: "text", text: "It is sunny." },
];
const webSearchTools = [{ type: "web_search_20250305", name: "web_search", max_uses: 3 }] as never;

/** Messages as the Messages API reads them: consecutive messages of one role merged into one turn. */
function mergedTurns(messages: unknown): Json[] {
  const turns: { role: unknown; content: unknown[] }[] = [];
  for (const message of withoutMarkers(messages) as Json[]) {
    const { content } = message;
    const blocks = typeof content === "string" ? [{ type: "text", text: content }] : (content as unknown[]);
    const last = turns.at(-1);
    if (last !== undefined && last.role === message["role"]) last.content.push(...blocks);
    else turns.push({ role: message["role"], content: [...blocks] });
  }
  return turns;
}

const withoutMarkers = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value), (key, inner: unknown) => (key === "cache_control" ? undefined : inner));

describe("the Anthropic Messages proxy, with the official @anthropic-ai/sdk client", () => {
  it("forwards a small stateless request as the client sent it, with its headers, system, tools and signatures", async () => {
    const { harness, client } = await setup({ responses: [{ text: "Found it." }] });
    const messages = conversation(1);
    const answer = await client({ "anthropic-beta": "interleaved-thinking-2025-05-14" }).messages.create({
      model: "claude-sonnet-4-5",
      max_tokens: 1_000,
      system,
      tools,
      messages: messages as never,
      thinking: { type: "enabled", budget_tokens: 1_024 },
    });
    expect(answer.content).toEqual([{ type: "text", text: "Found it." }]);
    const sent = harness.upstream.requests[0]!;
    expect(sent.path).toBe("/v1/messages");
    expect(sent.headers["x-api-key"]).toBe("sk-ant-upstream-secret-0123456789");
    expect(sent.headers["authorization"]).toBeUndefined();
    expect(sent.headers["anthropic-version"]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(sent.headers["anthropic-beta"]).toBe("interleaved-thinking-2025-05-14");
    expect(sent.body["system"]).toEqual(system);
    expect(sent.body["thinking"]).toEqual({ type: "enabled", budget_tokens: 1_024 });
    expect(withoutMarkers(sent.body.tools)).toEqual(tools);
    expect(withoutMarkers(sent.body.messages)).toEqual(messages);
    expect(countAnthropicBreakpoints(sent.body as never)).toBeLessThanOrEqual(4);
  });

  it("sends images, documents and tool-result images through unchanged", async () => {
    const { harness, client } = await setup({ responses: [{ text: "A red dot." }] });
    const png = Buffer.from("fake png bytes").toString("base64");
    const messages = [
      {
        role: "user",
        content: [
          { type: "image", source: { type: "base64", media_type: "image/png", data: png } },
          {
            type: "document",
            source: { type: "text", media_type: "text/plain", data: "Q3 notes" },
            title: "notes.txt",
          },
          { type: "text", text: "What do these show?" },
        ],
      },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_shot", name: "Screenshot", input: {} }] },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_shot",
            content: [
              { type: "text", text: "captured" },
              { type: "image", source: { type: "base64", media_type: "image/png", data: png } },
            ],
          },
        ],
      },
    ];
    await client().messages.create({
      model: "claude-sonnet-4-5",
      max_tokens: 100,
      messages: messages as never,
    });
    expect(withoutMarkers(harness.upstream.requests[0]!.body.messages)).toEqual(messages);
  });

  it("governs a growing stateless conversation deterministically: prefix kept between checkpoints, repeats identical", async () => {
    // Enough steps that the 12k window fills well past the compaction trigger (0.9 of the usable window).
    const STEPS = 30;
    const { harness, client } = await setup({
      contextWindow: 12_000,
      responses: () => ({ text: "next" }),
    });
    const anthropic = client();
    const sentMessages: string[] = [];
    const checkpoints: boolean[] = [];
    for (let steps = 1; steps <= STEPS; steps++) {
      const response = await anthropic.messages
        .create({
          model: "claude-sonnet-4-5",
          max_tokens: 1_000,
          system,
          tools,
          messages: conversation(steps) as never,
        })
        .withResponse();
      checkpoints.push(response.response.headers.get("x-ctxkit-checkpoint") === "true");
      const body = harness.upstream.requests.at(-1)!.body;
      expect(countAnthropicBreakpoints(body as never)).toBeLessThanOrEqual(4);
      expect(body["system"]).toEqual(system);
      sentMessages.push(JSON.stringify(withoutMarkers(body.messages)));
    }
    // The window filled: older reads were governed, and the newest step went as the client sent it.
    const last = JSON.parse(sentMessages.at(-1)!) as Json[];
    expect(sentMessages.at(-1)!.length).toBeLessThan(JSON.stringify(conversation(STEPS)).length / 2);
    expect(last.slice(-2)).toEqual(conversation(STEPS).slice(-2));
    expect(checkpoints.filter(Boolean).length).toBeGreaterThan(0);
    expect(checkpoints.filter(Boolean).length).toBeLessThan(8);
    // Between checkpoints the payload only grows at its end, so the provider's cached prefix stays valid.
    for (let index = 1; index < sentMessages.length; index++) {
      if (checkpoints[index]) continue;
      const before = JSON.parse(sentMessages[index - 1]!) as Json[];
      const now = JSON.parse(sentMessages[index]!) as Json[];
      expect(now.slice(0, before.length - 1)).toEqual(before.slice(0, -1));
    }
    // The same request again gets the same payload.
    await anthropic.messages.create({
      model: "claude-sonnet-4-5",
      max_tokens: 1_000,
      system,
      tools,
      messages: conversation(STEPS) as never,
    });
    expect(JSON.stringify(withoutMarkers(harness.upstream.requests.at(-1)!.body.messages))).toBe(
      sentMessages.at(-1),
    );
    expect(JSON.stringify(harness.upstream.requests.at(-1)!.body)).toBe(
      JSON.stringify(harness.upstream.requests.at(-2)!.body),
    );
  });

  it("streams Anthropic's events back untouched, and counts tokens of the governed payload", async () => {
    const { harness, client } = await setup({
      contextWindow: 12_000,
      responses: [
        {
          reasoning: "Read the parser.",
          text: "Done.",
          toolCalls: [{ id: "toolu_x", name: "Read", arguments: { path: "a.ts" } }],
        },
      ],
    });
    const stream = client().messages.stream({
      model: "claude-sonnet-4-5",
      max_tokens: 1_000,
      system,
      tools,
      messages: conversation(2) as never,
    });
    const message = await stream.finalMessage();
    expect(message.content.map((block) => block.type)).toEqual(["thinking", "text", "tool_use"]);
    expect(message.content[2]).toMatchObject({ id: "toolu_x", name: "Read", input: { path: "a.ts" } });
    expect(message.stop_reason).toBe("tool_use");
    expect(harness.upstream.requests[0]!.body.stream).toBe(true);

    const big = conversation(24);
    const counted = await client().messages.countTokens({
      model: "claude-sonnet-4-5",
      system,
      tools,
      messages: big as never,
    });
    const ungoverned = Math.ceil(JSON.stringify([system, big, tools]).length / 4);
    expect(counted.input_tokens).toBeGreaterThan(0);
    expect(counted.input_tokens).toBeLessThan(ungoverned / 2);
  });

  it("answers errors in Anthropic's shape: a bad key, a bad body, an upstream rate limit", async () => {
    const { harness, client } = await setup({ responses: [rateLimited({ retryAfterSeconds: 7 })] });
    await expect(
      client({}, "ctxk_wrong").messages.create({
        model: "m",
        max_tokens: 10,
        messages: [{ role: "user", content: "hi" }],
      }),
    ).rejects.toMatchObject({
      status: 401,
      error: { type: "error", error: { type: "authentication_error" } },
    });

    const bad = await harness.call("/v1/messages", { method: "POST", json: { model: "m", max_tokens: 10 } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });

    const limited = client().messages.create({
      model: "m",
      max_tokens: 10,
      messages: [{ role: "user", content: "hi" }],
    });
    await expect(limited).rejects.toMatchObject({
      status: 429,
      error: { type: "error", error: { type: "rate_limit_error" } },
    });
    await expect(limited).rejects.toBeInstanceOf(Anthropic.RateLimitError);
  });

  it("governs a stateless history holding server-tool blocks and sends it back as the client sent it", async () => {
    const { harness, client } = await setup({ responses: [{ text: "ok" }] });
    const messages = [
      { role: "user", content: "What is new in Node 24?" },
      { role: "assistant", content: webSearchReply },
      { role: "user", content: "Try again." },
    ];
    const response = await client()
      .messages.create({ model: "m", max_tokens: 10, tools: webSearchTools, messages: messages as never })
      .withResponse();
    expect(response.response.headers.get("x-ctxkit-governed")).toBe("true");
    expect(withoutMarkers(harness.upstream.requests[0]!.body.messages)).toEqual(messages);
  });

  it("forwards a history holding a block ctxkit cannot read, ungoverned, instead of failing the agent", async () => {
    const { harness, client } = await setup({ responses: [{ text: "ok" }] });
    const messages = [
      { role: "user", content: [{ type: "image", source: { type: "hologram", frames: 3 } }] },
      { role: "assistant", content: [{ type: "text", text: "A hologram." }] },
      { role: "user", content: "Describe it." },
    ];
    const response = await client()
      .messages.create({ model: "m", max_tokens: 10, messages: messages as never })
      .withResponse();
    expect(response.response.headers.get("x-ctxkit-governed")).toBe("false");
    expect(harness.upstream.requests[0]!.body.messages).toEqual(messages);
    expect(harness.logs.some((line) => line.startsWith("ungoverned "))).toBe(true);
  });

  it("with X-Ctxkit-Session takes in a history holding server-tool blocks, stores them, and sends them back in place", async () => {
    const store = new MemorySessionStore();
    const { harness, client } = await setup({
      store,
      responses: [{ text: "Rain." }, { text: "Still rain." }],
    });
    const headers = { "X-Ctxkit-Session": "search-1" };
    const messages = [
      { role: "user", content: "What's the weather in Paris? Search the web." },
      { role: "assistant", content: webSearchReply },
      { role: "user", content: [{ type: "search_result", source: "https://x", title: "t", content: [] }] },
      { role: "assistant", content: [{ type: "text", text: "Noted." }] },
      { role: "user", content: "And tomorrow?" },
    ];
    const create = (list: unknown[]) =>
      client(headers).messages.create({
        model: "claude-sonnet-4-5",
        max_tokens: 100,
        tools: webSearchTools,
        messages: list as never,
      });
    const first = await create(messages);
    expect(first.content).toEqual([{ type: "text", text: "Rain." }]);
    expect(withoutMarkers(harness.upstream.requests[0]!.body.messages)).toEqual(messages);
    // The next request resends everything: nothing is stored twice, and the blocks go back where they were.
    const more = [
      ...messages,
      { role: "assistant", content: first.content },
      { role: "user", content: "Sure?" },
    ];
    await create(more);
    expect(withoutMarkers(harness.upstream.requests[1]!.body.messages)).toEqual(more);
    const stored = await store.loadMessages("acme/search-1", { strategy: "all" });
    expect(stored.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(stored[1]!.content.map((block) => block.type)).toEqual(["opaque", "opaque", "text"]);
  });

  it("with X-Ctxkit-Session records a reply holding server-tool blocks and sends it back whole next time", async () => {
    const store = new MemorySessionStore();
    const reply = {
      id: "msg_search",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: webSearchReply,
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 30, output_tokens: 20, server_tool_use: { web_search_requests: 1 } },
    };
    const { harness, client } = await setup({ store, responses: [{ status: 200, body: reply }, "Sunny."] });
    const headers = { "X-Ctxkit-Session": "search-2" };
    const ask = { role: "user", content: "What's the weather in Paris? Search the web." };
    const answer = await client(headers).messages.create({
      model: "claude-sonnet-4-5",
      max_tokens: 100,
      tools: webSearchTools,
      messages: [ask] as never,
    });
    expect(answer.content).toEqual(webSearchReply);
    const stored = await store.loadMessages("acme/search-2", { strategy: "all" });
    expect(stored[1]!.content).toEqual([
      { type: "opaque", provider: "anthropic", data: webSearchReply[0] },
      { type: "opaque", provider: "anthropic", data: webSearchReply[1] },
      { type: "text", text: "It is sunny." },
    ]);
    // An SDK app resends its history with the reply as it came: 200, the reply goes back whole and in order.
    const messages = [
      ask,
      { role: "assistant", content: answer.content },
      { role: "user", content: "Tomorrow?" },
    ];
    const next = await client(headers).messages.create({
      model: "claude-sonnet-4-5",
      max_tokens: 100,
      tools: webSearchTools,
      messages: messages as never,
    });
    expect(next.content).toEqual([{ type: "text", text: "Sunny." }]);
    expect(withoutMarkers(harness.upstream.requests[1]!.body.messages)).toEqual(messages);
    expect(await store.loadMessages("acme/search-2", { strategy: "all" })).toHaveLength(4);
  });

  it("with X-Ctxkit-Session resumes a turn a server tool paused (pause_turn), and stores both parts in order", async () => {
    const store = new MemorySessionStore();
    const paused = webSearchReply.slice(0, 2);
    const pausedReply = {
      id: "msg_paused",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: paused,
      stop_reason: "pause_turn",
      stop_sequence: null,
      usage: { input_tokens: 30, output_tokens: 20, server_tool_use: { web_search_requests: 1 } },
    };
    const { harness, client } = await setup({
      store,
      responses: [
        { status: 200, body: pausedReply },
        rateLimited({ retryAfterSeconds: 0 }),
        "It is sunny.",
        "Sunny too.",
      ],
    });
    const headers = { "X-Ctxkit-Session": "paused-1" };
    const create = (messages: unknown[]) =>
      client(headers).messages.create({
        model: "claude-sonnet-4-5",
        max_tokens: 100,
        tools: webSearchTools,
        messages: messages as never,
      });
    const ask = { role: "user", content: "What's the weather in Paris? Search the web." };
    const first = await create([ask]);
    expect(first.stop_reason).toBe("pause_turn");
    // As Anthropic's docs say: send the paused reply back as it came, last, with nothing new.
    const resumed = [ask, { role: "assistant", content: first.content }];
    // A continuation that fails stores nothing: the client sends it again.
    await expect(create(resumed)).rejects.toMatchObject({ status: 429 });
    expect(await store.loadMessages("acme/paused-1", { strategy: "all" })).toHaveLength(2);
    const second = await create(resumed);
    expect(second.content).toEqual([{ type: "text", text: "It is sunny." }]);
    // The continuation went upstream with the paused reply last, whole.
    expect(withoutMarkers(harness.upstream.requests[2]!.body.messages)).toEqual(resumed);
    const stored = await store.loadMessages("acme/paused-1", { strategy: "all" });
    expect(stored.map((message) => [message.role, message.turn, message.finishReason])).toEqual([
      ["user", 1, undefined],
      ["assistant", 1, "pause_turn"],
      ["assistant", 1, "end_turn"],
    ]);
    expect(stored[1]!.content.map((block) => block.type)).toEqual(["opaque", "opaque"]);
    expect(stored[2]!.content).toEqual([{ type: "text", text: "It is sunny." }]);
    // The next turn: the client appended the continuation after the paused reply, then its question.
    const next = [
      ...resumed,
      { role: "assistant", content: second.content },
      { role: "user", content: "Tomorrow?" },
    ];
    const third = await create(next);
    expect(third.content).toEqual([{ type: "text", text: "Sunny too." }]);
    expect(third.stop_reason).toBe("end_turn");
    expect(await store.loadMessages("acme/paused-1", { strategy: "all" })).toHaveLength(5);
    // What the API takes: consecutive same-role messages merge into one turn; the turns alternate, user first
    // and last, the paused content before the continuation's.
    const turns = mergedTurns(harness.upstream.requests[3]!.body.messages);
    expect(turns).toEqual([
      { role: "user", content: [{ type: "text", text: ask.content }] },
      { role: "assistant", content: [...paused, { type: "text", text: "It is sunny." }] },
      { role: "user", content: [{ type: "text", text: "Tomorrow?" }] },
    ]);
  });

  it("with X-Ctxkit-Session refuses a request with nothing new after a reply that did not pause", async () => {
    const store = new MemorySessionStore();
    const { harness, client } = await setup({ store, responses: ["Hello."] });
    const headers = { "X-Ctxkit-Session": "done-1" };
    const ask = { role: "user" as const, content: "Hi" };
    const first = await client(headers).messages.create({ model: "m", max_tokens: 10, messages: [ask] });
    const again = client(headers).messages.create({
      model: "m",
      max_tokens: 10,
      messages: [ask, { role: "assistant", content: first.content }],
    });
    await expect(again).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining("no new message"),
    });
    expect(harness.upstream.requests).toHaveLength(1);
    expect(await store.loadMessages("acme/done-1", { strategy: "all" })).toHaveLength(2);
  });

  it("with X-Ctxkit-Session and memory in context, sends the client's system blocks, then the tenant's memories", async () => {
    const { harness, client } = await setup({
      responses: [{ text: "ok" }],
      server: { memoryInContext: true },
    });
    await harness.call("/v1/memory", {
      method: "POST",
      json: { kind: "preference", content: "Acme prefers metric units" },
    });
    await client({ "X-Ctxkit-Session": "mem-claude" }).messages.create({
      model: "claude-sonnet-4-5",
      max_tokens: 100,
      system,
      messages: [{ role: "user", content: "hello" }],
    });
    const sent = harness.upstream.requests[0]!.body["system"] as { text: string }[];
    expect(sent.slice(0, 2)).toEqual(system);
    expect(sent).toHaveLength(3);
    expect(sent[2]!.text).toContain("Acme prefers metric units");
  });

  it("with X-Ctxkit-Session stores the conversation once, records streamed replies, and survives a restart", async () => {
    const store = new MemorySessionStore();
    const first = await setup({
      store,
      responses: [
        {
          reasoning: "Look first.",
          toolCalls: [{ id: "toolu_0", name: "Read", arguments: { path: "src/file0.ts" } }],
        },
      ],
    });
    const headers = { "X-Ctxkit-Session": "claude-1" };
    const opening = conversation(0);
    const reply = await first
      .client(headers)
      .messages.stream({
        model: "claude-sonnet-4-5",
        max_tokens: 1_000,
        system,
        tools,
        messages: opening as never,
      })
      .finalMessage();
    await first.harness.close();
    harnesses.splice(0);

    const second = await setup({ store, responses: [{ text: "The bug is on line 3." }] });
    // Claude Code resends everything: the session skips what it holds.
    const whole = conversation(1);
    whole[2] = { role: "assistant", content: reply.content };
    const answer = await second.client(headers).messages.create({
      model: "claude-sonnet-4-5",
      max_tokens: 1_000,
      system,
      tools,
      messages: whole as never,
    });
    expect(answer.content).toEqual([{ type: "text", text: "The bug is on line 3." }]);
    const stored = await store.loadMessages("acme/claude-1", { strategy: "all" });
    expect(stored.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    // Replies of the Anthropic upstream are recorded as Anthropic's, streamed or not.
    expect([stored[1]!.provider, stored[3]!.provider]).toEqual(["anthropic", "anthropic"]);
    expect(toolCallsOf(stored[1]!)).toMatchObject([{ id: "toolu_0", name: "Read" }]);
    expect(stored[1]!.content[0]).toMatchObject({
      type: "reasoning",
      text: "Look first.",
      signature: expect.any(String),
    });
    // The upstream got the session's view with the signed thinking back, and the environment in the system prompt.
    const sent = second.harness.upstream.requests[0]!.body;
    expect(JSON.stringify(sent["system"])).toContain("# Environment");
    expect(sent.messages?.[1]).toMatchObject({ role: "assistant", content: reply.content });
  });

  it("with X-Ctxkit-Session stores only its conversation: another one on the same header (a subagent, a side request) goes statelessly", async () => {
    const store = new MemorySessionStore();
    const { harness, client } = await setup({
      store,
      responses: [
        { toolCalls: [{ id: "toolu_agent", name: "Agent", arguments: { prompt: "Count the lines." } }] },
        { toolCalls: [{ id: "toolu_sub", name: "Read", arguments: { path: "src/parser.ts" } }] },
        { text: "42 lines." },
        { text: "The subagent counted 42 lines." },
        { text: "Parser fix" },
        { text: "Nothing else." },
      ],
    });
    const headers = { "X-Ctxkit-Session": "main-1" };
    const send = (messages: unknown[], withTools = true) =>
      client(headers)
        .messages.create({
          model: "claude-sonnet-4-5",
          max_tokens: 100,
          system,
          ...(withTools && { tools }),
          messages: messages as never,
        })
        .withResponse();
    const task = { role: "user", content: "Fix the parser, ask a subagent to count its lines." };
    const first = await send([task]);
    expect(first.response.headers.get("x-ctxkit-stored")).toBe("true");

    // The subagent's conversation, while the main one waits for its tool call: its own first message, its own
    // history. Each request goes upstream as it came (the session's history is not added), and is not stored.
    const subTask = { role: "user", content: "Count the lines of src/parser.ts." };
    const sub1 = await send([subTask]);
    expect(sub1.response.headers.get("x-ctxkit-stored")).toBe("false");
    expect(sub1.response.headers.get("x-ctxkit-session")).toBe("main-1");
    expect(withoutMarkers(harness.upstream.requests[1]!.body.messages)).toEqual([subTask]);
    const subHistory = [
      subTask,
      { role: "assistant", content: sub1.data.content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_sub", content: "42 lines" }] },
    ];
    const sub2 = await send(subHistory);
    expect(sub2.data.content).toEqual([{ type: "text", text: "42 lines." }]);
    expect(sub2.response.headers.get("x-ctxkit-stored")).toBe("false");
    expect(withoutMarkers(harness.upstream.requests[2]!.body.messages)).toEqual(subHistory);

    // The main conversation continues intact, as if the subagent had never passed through.
    const main = [
      task,
      { role: "assistant", content: first.data.content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_agent", content: "42 lines." }] },
    ];
    const second = await send(main);
    expect(second.response.headers.get("x-ctxkit-stored")).toBe("true");
    expect(withoutMarkers(harness.upstream.requests[3]!.body.messages)).toEqual(main);

    // A side request between two turns (a title, no tools) neither: the client is known to resend its history.
    const title = [{ role: "user", content: "Give this conversation a title." }];
    const side = await send(title, false);
    expect(side.response.headers.get("x-ctxkit-stored")).toBe("false");
    expect(withoutMarkers(harness.upstream.requests[4]!.body.messages)).toEqual(title);

    const third = [
      ...main,
      { role: "assistant", content: second.data.content },
      { role: "user", content: "Anything else?" },
    ];
    await send(third);
    expect(withoutMarkers(harness.upstream.requests[5]!.body.messages)).toEqual(third);
    const stored = await store.loadMessages("acme/main-1", { strategy: "all" });
    expect(stored.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(JSON.stringify(stored)).not.toContain("src/parser.ts");
    expect(JSON.stringify(stored)).not.toContain("title");
  });

  it("with X-Ctxkit-Session still stores every turn of a client that sends only its new messages", async () => {
    const store = new MemorySessionStore();
    const { harness, client } = await setup({
      store,
      responses: [
        { toolCalls: [{ id: "toolu_1", name: "Read", arguments: { path: "a.ts" } }] },
        { text: "Read it." },
        { toolCalls: [{ id: "toolu_2", name: "Read", arguments: { path: "b.ts" } }] },
        { text: "Fine." },
      ],
    });
    const send = (messages: unknown[]) =>
      client({ "X-Ctxkit-Session": "new-only" })
        .messages.create({ model: "claude-sonnet-4-5", max_tokens: 100, tools, messages: messages as never })
        .withResponse();
    await send([{ role: "user", content: "Read a.ts." }]);
    const answered = await send([
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "const a = 1;" }] },
    ]);
    expect(answered.response.headers.get("x-ctxkit-stored")).toBe("true");
    const next = await send([{ role: "user", content: "Thanks, and b.ts?" }]);
    expect(next.response.headers.get("x-ctxkit-stored")).toBe("true");
    expect(harness.upstream.requests[2]!.body.messages).toHaveLength(5);
    // It leaves the tool call unanswered: still its conversation (it was seen sending only new messages).
    const abandoned = await send([{ role: "user", content: "Never mind." }]);
    expect(abandoned.response.headers.get("x-ctxkit-stored")).toBe("true");
    expect(JSON.stringify(harness.upstream.requests[3]!.body.messages)).toContain("Read it.");
    const stored = await store.loadMessages("acme/new-only", { strategy: "all" });
    expect(stored.filter((message) => message.role === "user")).toHaveLength(3);
    expect(stored.at(-1)!.content).toEqual([{ type: "text", text: "Fine." }]);
  });

  it("with X-Ctxkit-Session goes on storing after a client retried a turn whose answer it never received", async () => {
    const store = new MemorySessionStore();
    const { harness } = await setup({ store, responses: ["A1", "A2", "A2 again", "A3"] });
    const client = new Anthropic({
      baseURL: harness.server.url,
      apiKey: harness.acme,
      maxRetries: 0,
      defaultHeaders: { "X-Ctxkit-Session": "retried" },
    });
    const send = async (messages: unknown[]) => {
      const { data, response } = await client.messages
        .create({ model: "claude-sonnet-4-5", max_tokens: 100, messages: messages as never })
        .withResponse();
      return {
        text: (data.content[0] as { text: string }).text,
        stored: response.headers.get("x-ctxkit-stored"),
      };
    };
    const q1 = { role: "user", content: "q1" };
    const a1 = { role: "assistant", content: (await send([q1])).text };
    const q2 = { role: "user", content: "q2" };
    // Stored, but the client never got it (a timeout): it sends the same request again.
    expect(await send([q1, a1, q2])).toEqual({ text: "A2", stored: "true" });
    const retry = await send([q1, a1, q2]);
    expect(retry).toEqual({ text: "A2 again", stored: "false" });
    // The client goes on from its own copy of the answer: the session is stored again from there.
    const next = await send([
      q1,
      a1,
      q2,
      { role: "assistant", content: retry.text },
      { role: "user", content: "q3" },
    ]);
    expect(next).toEqual({ text: "A3", stored: "true" });
    const rows = await store.loadMessages("acme/retried", { strategy: "all" });
    expect(rows.map((message) => `${message.role}:${(message.content[0] as { text: string }).text}`)).toEqual(
      ["user:q1", "assistant:A1", "user:q2", "assistant:A2", "user:q3", "assistant:A3"],
    );
  });

  it("with X-Ctxkit-Session serves a history that branched off the session (rewound, compacted) statelessly", async () => {
    const store = new MemorySessionStore();
    const { harness, client } = await setup({
      store,
      responses: [
        { toolCalls: [{ id: "toolu_0", name: "Read", arguments: { path: "a.ts" } }] },
        { text: "a.ts sets a to 1." },
        { text: "Summary: the user read a.ts." },
        { text: "No." },
      ],
    });
    const send = (messages: unknown[]) =>
      client({ "X-Ctxkit-Session": "branched" })
        .messages.create({ model: "claude-sonnet-4-5", max_tokens: 100, tools, messages: messages as never })
        .withResponse();
    const task = { role: "user", content: "What does a.ts do?" };
    const first = await send([task]);
    const opening = [
      task,
      { role: "assistant", content: first.data.content },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_0", content: "export const a = 1;" }],
      },
    ];
    const second = await send(opening);
    // Claude Code's /compact: its history up to the tool result, without the latest reply, then its request.
    const [, , result] = opening as [unknown, unknown, { content: unknown[] }];
    const compact = [
      ...opening.slice(0, 2),
      { role: "user", content: [...result.content, { type: "text", text: "Summarize the conversation." }] },
    ];
    const branch = await send(compact);
    expect(branch.response.headers.get("x-ctxkit-stored")).toBe("false");
    expect(branch.data.content).toEqual([{ type: "text", text: "Summary: the user read a.ts." }]);
    expect(withoutMarkers(harness.upstream.requests[2]!.body.messages)).toEqual(compact);
    // The session's own conversation goes on where it was.
    const next = [
      ...opening,
      { role: "assistant", content: second.data.content },
      { role: "user", content: "More?" },
    ];
    expect((await send(next)).response.headers.get("x-ctxkit-stored")).toBe("true");
    const stored = await store.loadMessages("acme/branched", { strategy: "all" });
    expect(stored.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(JSON.stringify(stored)).not.toContain("Summar");
  });
});
