import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { messageText, toolCallsOf } from "../model/blocks.ts";
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
    new OpenAI({ baseURL: `${harness.server.url}/v1`, apiKey: key, maxRetries: 0, defaultHeaders: headers });
  return { harness, client };
}

const tools = [
  {
    type: "function" as const,
    name: "read_file",
    description: "Reads a file",
    strict: false,
    parameters: { type: "object", properties: { path: { type: "string" } } },
  },
];

type Items = readonly Record<string, unknown>[];

describe("the OpenAI Responses proxy, with the official openai client", () => {
  it("chains previous_response_id across a server restart; the upstream always gets store:false and the whole governed input", async () => {
    const store = new MemorySessionStore();
    const first = await setup({
      store,
      responses: [
        {
          reasoning: "look at the file",
          toolCalls: [{ id: "call_1", name: "read_file", arguments: { path: "a.txt" } }],
          usage: { promptTokens: 40, completionTokens: 9 },
        },
      ],
    });
    const answer = await first.client().responses.create({
      model: "whatever",
      instructions: "You are terse.",
      input: [{ role: "user", content: "What is in a.txt?" }],
      reasoning: { effort: "low" },
      tools,
    });
    expect(answer.id).toMatch(/^resp_ck\.resp-[0-9a-f-]+\.r[0-9a-f]{32}$/);
    const call = answer.output.find((item) => item.type === "function_call");
    expect(call).toMatchObject({ call_id: "call_1", name: "read_file", arguments: '{"path":"a.txt"}' });
    expect(answer.usage).toMatchObject({ input_tokens: 40, output_tokens: 9 });
    const sent = first.harness.upstream.requests[0]!.body;
    expect(sent).toMatchObject({ store: false, model: "fake-model", instructions: "You are terse.", tools });
    expect(sent["previous_response_id"]).toBeUndefined();
    expect(sent["include"]).toEqual(["reasoning.encrypted_content"]);
    await first.harness.close();
    harnesses.splice(0);

    // A new server on the same store finds the session the id names.
    const second = await setup({
      store,
      responses: [{ text: "It says hello.", usage: { promptTokens: 60, completionTokens: 4 } }],
    });
    const next = await second.client().responses.create({
      model: "whatever",
      instructions: "You are terse.",
      previous_response_id: answer.id,
      input: [{ type: "function_call_output", call_id: "call_1", output: "hello" }],
      tools,
    });
    expect(next.output_text).toBe("It says hello.");
    const sessionId = decodeURIComponent(answer.id.split(".")[1]!);
    expect(next.id.startsWith(`resp_ck.${sessionId}.`)).toBe(true);
    const input = second.harness.upstream.requests[0]!.body.input as Items;
    expect(input.map((item) => item["type"])).toEqual([
      "message",
      "reasoning",
      "function_call",
      "function_call_output",
    ]);
    // The reasoning item goes back as the model sent it, encrypted content included.
    expect(input[1]).toMatchObject({
      type: "reasoning",
      encrypted_content: `enc:${Buffer.from("look at the file").toString("base64")}`,
    });
    expect(second.harness.upstream.requests[0]!.body).toMatchObject({
      store: false,
      instructions: "You are terse.",
    });
    const stored = await store.loadMessages(`acme/${sessionId}`);
    expect(stored.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(toolCallsOf(stored[1]!)[0]?.id).toBe("call_1");
    expect(messageText(stored[3]!)).toBe("It says hello.");
    expect(stored[3]?.usage).toEqual({ input: 60, output: 4 });
  });

  it("streams the Responses events with ctxkit's response id and stores the reply", async () => {
    const { harness, client } = await setup({
      responses: [
        { text: "First, in pieces.", chunkSize: 3 },
        { toolCalls: [{ id: "call_9", name: "read_file", arguments: { path: "b.txt" } }], chunkSize: 4 },
      ],
    });
    const openai = client({ "X-Ctxkit-Session": "stream-1" });
    const stream = await openai.responses.create({ model: "m", input: "Hi", stream: true });
    const types: string[] = [];
    let text = "";
    let completed: OpenAI.Responses.Response | undefined;
    let created: string | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
      if (event.type === "response.completed") completed = event.response;
      if (event.type === "response.created") created = event.response.id;
    }
    expect(created).toMatch(/^resp_ck\.stream-1\.r[0-9a-f]{32}$/);
    expect(types[0]).toBe("response.created");
    expect(types).toContain("response.output_item.added");
    expect(types).toContain("response.output_item.done");
    expect(types.at(-1)).toBe("response.completed");
    expect(text).toBe("First, in pieces.");
    expect(completed?.id).toBe(created);
    expect(completed?.usage?.output_tokens).toBeGreaterThan(0);

    const second = await openai.responses.create({
      model: "m",
      input: "Read b.txt",
      stream: true,
      previous_response_id: completed!.id,
    });
    const argumentDeltas: string[] = [];
    for await (const event of second) {
      if (event.type === "response.function_call_arguments.delta") argumentDeltas.push(event.delta);
    }
    expect(argumentDeltas.join("")).toBe('{"path":"b.txt"}');
    // Without reasoning configured, no include is added (models without reasoning refuse it).
    expect(harness.upstream.requests[1]!.body["include"]).toBeUndefined();
    const stored = await harness.store.loadMessages("acme/stream-1");
    expect(stored.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(toolCallsOf(stored[3]!)[0]).toMatchObject({ id: "call_9", input: { path: "b.txt" } });
  });

  it("store:false without a session header stores nothing and forwards the client's input governed statelessly", async () => {
    const { harness, client } = await setup({ responses: ["stateless answer", "again"] });
    const input = [
      { type: "message" as const, role: "developer" as const, content: "Be brief." },
      { type: "message" as const, role: "user" as const, content: "Hi" },
      { type: "reasoning" as const, id: "rs_1", summary: [], encrypted_content: "ENC" },
      { type: "function_call" as const, call_id: "c1", name: "read_file", arguments: "{}" },
      { type: "function_call_output" as const, call_id: "c1", output: "contents" },
    ];
    const answer = await client().responses.create({ model: "m", input, store: false, tools });
    expect(answer.output_text).toBe("stateless answer");
    expect(answer.id).toBe("resp_fake_1");
    const sent = harness.upstream.requests[0]!.body;
    expect(sent.input).toEqual(input);
    expect(sent["store"]).toBe(false);
    expect((await harness.store.listSessions()).sessions).toHaveLength(0);
    // The upstream's own id names no stored response.
    await expect(
      client().responses.create({ model: "m", input: "more", previous_response_id: answer.id }),
    ).rejects.toMatchObject({ status: 404, code: "previous_response_not_found", type: "not_found_error" });
  });

  it("after previous_response_id stores the input whole, even items equal to what the session holds", async () => {
    const { harness, client } = await setup({ responses: ["ok", "again ok"] });
    const first = await client().responses.create({ model: "m", input: "hello" });
    await client().responses.create({
      model: "m",
      previous_response_id: first.id,
      input: [
        { role: "user", content: "hello" },
        { role: "assistant", content: "ok" },
        { role: "user", content: "and again" },
      ],
    });
    const sessionId = decodeURIComponent(first.id.split(".")[1]!);
    const stored = await harness.store.loadMessages(`acme/${sessionId}`);
    expect(stored.map((message) => [message.role, messageText(message)])).toEqual([
      ["user", "hello"],
      ["assistant", "ok"],
      ["user", "hello"],
      ["assistant", "ok"],
      ["user", "and again"],
      ["assistant", "again ok"],
    ]);
  });

  it("answers errors in OpenAI's shape: unknown and foreign ids 404, bad bodies 400, upstream limits 429", async () => {
    const { harness, client } = await setup({ responses: ["mine", rateLimited({ retryAfterSeconds: 3 })] });
    const mine = await client().responses.create({ model: "m", input: "hello" });
    await expect(
      client({}, harness.globex).responses.create({
        model: "m",
        input: "steal",
        previous_response_id: mine.id,
      }),
    ).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(
      client().responses.create({ model: "m", input: "x", previous_response_id: "resp_ck.nope.3" }),
    ).rejects.toMatchObject({ status: 404, code: "previous_response_not_found" });
    const bad = await harness.call("/v1/responses", { method: "POST", json: { model: "m", input: [] } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { type: string } }).error.type).toBe("invalid_request_error");
    // Only the latest response of a session can be continued: an older one is a conflict.
    const stale = `${mine.id.slice(0, mine.id.lastIndexOf("."))}.0`;
    await expect(
      client().responses.create({ model: "m", input: "branch", previous_response_id: stale }),
    ).rejects.toMatchObject({ status: 409, code: "conflict" });
    const limited = client().responses.create({ model: "m", input: "again", previous_response_id: mine.id });
    await expect(limited).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    // The failed turn left nothing behind.
    const sessionId = decodeURIComponent(mine.id.split(".")[1]!);
    expect(await harness.store.loadMessages(`acme/${sessionId}`)).toHaveLength(2);
  });

  it("keeps the previous_response_id chain across compactions, a failed request and a restart; never reissues an id", async () => {
    const store = new MemorySessionStore();
    const failAt = 9;
    const script = {
      store,
      contextWindow: 6_000,
      responses: (request: { index: number }) =>
        request.index === failAt
          ? { status: 500, error: { message: "boom", type: "server_error" } }
          : { text: `noted ${request.index} ${"z".repeat(600)}` },
    };
    let current = await setup(script);
    const issued: string[] = [];
    let latest: string | undefined;
    let checkpoints = 0;
    let failures = 0;
    const turn = async (label: string) => {
      const { data, response } = await current
        .client()
        .responses.create({
          model: "m",
          input: [{ role: "user", content: `${label} ${"y".repeat(1_200)}` }],
          ...(latest !== undefined && { previous_response_id: latest }),
        })
        .withResponse();
      if (response.headers.get("x-ctxkit-checkpoint") === "true") checkpoints++;
      issued.push(data.id);
      latest = data.id;
    };
    for (let index = 0; index < 14; index++) {
      // The failed request discards the session from memory: the next one reloads it, summaries in place.
      await turn(`turn ${index}`).catch((error: unknown) => {
        expect(error).toBeInstanceOf(OpenAI.InternalServerError);
        failures++;
      });
    }
    expect(failures).toBe(1);
    expect(checkpoints).toBeGreaterThan(0);
    await current.harness.close();
    harnesses.splice(0);

    // A restarted server on the same store continues from the latest id and from no other.
    current = await setup(script);
    for (const old of issued.slice(0, -1)) {
      await expect(
        current.client().responses.create({ model: "m", input: "branch", previous_response_id: old }),
      ).rejects.toMatchObject({ status: 409, code: "conflict" });
    }
    await turn("after the restart");
    await turn("and once more");
    expect(new Set(issued).size).toBe(issued.length);
    const sessionId = decodeURIComponent(latest!.split(".")[1]!);
    const all = await store.loadMessages(`acme/${sessionId}`, { strategy: "all" });
    expect(all.filter((message) => message.role === "assistant" && message.kind === undefined)).toHaveLength(
      15,
    );
    // The history holds fewer replies than were answered: summaries replaced the compacted ones.
    const full = await store.loadMessages(`acme/${sessionId}`);
    expect(full.some((message) => message.kind === "summary")).toBe(true);
  });

  it("continues from a response id of the earlier numbered form while it is the session's latest", async () => {
    const { harness, client } = await setup({ responses: ["third", "fourth"] });
    // A session written before ids were stored with replies: `resp_ck.<session>.<n>` counted its replies.
    await harness.store.appendTurn(
      "acme/legacy-1",
      [
        { role: "user", content: [{ type: "text", text: "one" }] },
        { role: "assistant", content: [{ type: "text", text: "first" }] },
        { role: "user", content: [{ type: "text", text: "two" }] },
        { role: "assistant", content: [{ type: "text", text: "second" }] },
      ],
      { expectedNextSeq: 0, session: { owner: "acme" } },
    );
    await expect(
      client().responses.create({ model: "m", input: "x", previous_response_id: "resp_ck.legacy-1.1" }),
    ).rejects.toMatchObject({ status: 409, code: "conflict" });
    const next = await client().responses.create({
      model: "m",
      input: "three",
      previous_response_id: "resp_ck.legacy-1.2",
    });
    expect(next.output_text).toBe("third");
    expect(next.id).toMatch(/^resp_ck\.legacy-1\.r[0-9a-f]{32}$/);
    // The old id is no longer the latest; the new one continues.
    await expect(
      client().responses.create({ model: "m", input: "x", previous_response_id: "resp_ck.legacy-1.2" }),
    ).rejects.toMatchObject({ status: 409 });
    await expect(
      client().responses.create({ model: "m", input: "x", previous_response_id: "resp_ck.legacy-1.3" }),
    ).rejects.toMatchObject({ status: 409 });
    const fourth = await client().responses.create({
      model: "m",
      input: "four",
      previous_response_id: next.id,
    });
    expect(fourth.output_text).toBe("fourth");
  });

  it("keeps built-in tool items in both modes: forwarded in place, stored with the reply and sent back", async () => {
    const search = {
      type: "web_search_call",
      id: "ws_1",
      status: "completed",
      action: { type: "search", query: "node latest" },
    };
    const found = {
      type: "web_search_call",
      id: "ws_2",
      status: "completed",
      action: { type: "search", query: "node lts" },
    };
    const reference = { type: "item_reference", id: "ws_0" };
    const shellOutput = { type: "local_shell_call_output", id: "lsco_1", output: "v24.1.0" };
    const { harness, client } = await setup({
      responses: [
        "stateless ok",
        {
          status: 200,
          body: {
            id: "resp_up",
            object: "response",
            created_at: 1,
            status: "completed",
            model: "fake-model",
            output: [
              found,
              {
                type: "message",
                id: "msg_2",
                role: "assistant",
                status: "completed",
                content: [{ type: "output_text", text: "Node 22 is LTS.", annotations: [] }],
              },
            ],
            usage: { input_tokens: 10, output_tokens: 3, total_tokens: 13 },
          },
        },
        "third",
      ],
    });
    const input = [
      { type: "message", role: "user", content: [{ type: "input_text", text: "latest node? search" }] },
      search,
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Node 24." }] },
      { type: "message", role: "user", content: [{ type: "input_text", text: "thanks; and LTS?" }] },
    ];
    const tools = [{ type: "web_search" }];
    const types = (items: Items) => items.map((item) => item["type"]);

    const stateless = await harness.call("/v1/responses", {
      method: "POST",
      json: { model: "m", store: false, input, tools },
    });
    expect(stateless.status).toBe(200);
    const forwarded = harness.upstream.requests[0]!.body.input as Items;
    expect(types(forwarded)).toEqual(["message", "web_search_call", "message", "message"]);
    expect(forwarded[1]).toEqual(search);

    const first = await client({ "X-Ctxkit-Session": "search-1" }).responses.create({
      model: "m",
      input: input as never,
      tools: tools as never,
    });
    expect(first.output_text).toBe("Node 22 is LTS.");
    expect((harness.upstream.requests[1]!.body.input as Items)[1]).toEqual(search);
    // The reply's built-in item is stored with it; the client's own items (a built-in tool's output, an item
    // reference) may end the new input; all go back upstream, in place and as sent.
    const next = await client().responses.create({
      model: "m",
      previous_response_id: first.id,
      input: [
        { type: "message", role: "user", content: "and on this machine?" },
        shellOutput,
        reference,
      ] as never,
      tools: tools as never,
    });
    expect(next.output_text).toBe("third");
    const sent = harness.upstream.requests[2]!.body.input as Items;
    expect(types(sent)).toEqual([
      "message",
      "web_search_call",
      "message",
      "message",
      "web_search_call",
      "message",
      "message",
      "local_shell_call_output",
      "item_reference",
    ]);
    expect(sent[1]).toEqual(search);
    expect(sent[4]).toEqual(found);
    expect(sent.slice(7)).toEqual([shellOutput, reference]);
    const stored = await harness.store.loadMessages("acme/search-1");
    expect(
      stored.flatMap((message) => message.content.filter((block) => block.type === "opaque")),
    ).toHaveLength(4);
  });

  it("governs a history full of built-in tool items: they are counted, and compacted with their messages", async () => {
    const { harness } = await setup({ contextWindow: 6_000, responses: () => "ok" });
    const history = Array.from({ length: 12 }, (_, turn) => [
      { role: "user", content: `search ${turn} ${"y".repeat(400)}` },
      {
        type: "web_search_call",
        id: `ws_${turn}`,
        status: "completed",
        action: { type: "search", query: `q${turn} ${"x".repeat(2_000)}` },
      },
      { role: "assistant", content: `found ${turn}` },
    ]).flat();
    const answer = await harness.call("/v1/responses", {
      method: "POST",
      json: { model: "m", store: false, input: [...history, { role: "user", content: "sum up" }] },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("x-ctxkit-checkpoint")).toBe("true");
    const sent = harness.upstream.requests[0]!.body.input as Items;
    expect(JSON.stringify(sent).length).toBeLessThan(JSON.stringify(history).length);
    // The newest turns go as they came, their built-in items included.
    expect(sent.at(-3)).toEqual(history.at(-2));
  });

  it("with a small window, governs both modes: upstream requests are smaller than the client's input and a checkpoint is reported", async () => {
    const { harness, client } = await setup({
      contextWindow: 6_000,
      responses: (request) => ({ text: `noted ${request.index} ` + "z".repeat(600) }),
    });
    // Stateless: a long history sent whole.
    const history = Array.from({ length: 40 }, (_, turn) => [
      { role: "user" as const, content: `turn ${turn} ${"y".repeat(1_200)}` },
      { role: "assistant" as const, content: `reply ${turn} ${"x".repeat(600)}` },
    ]).flat();
    const raw = await harness.call("/v1/responses", {
      method: "POST",
      json: { model: "m", store: false, input: [...history, { role: "user", content: "and now?" }] },
    });
    expect(raw.status).toBe(200);
    expect(raw.headers.get("x-ctxkit-checkpoint")).toBe("true");
    const sentStateless = JSON.stringify(harness.upstream.requests[0]!.body.input).length;
    expect(sentStateless).toBeLessThan(JSON.stringify(history).length);
    expect(sentStateless).toBeLessThan(6_000 * 4);

    // Stateful: a Codex-like client resending everything under one session header.
    const openai = client({ "X-Ctxkit-Session": "long-1" });
    const sent: Record<string, unknown>[] = [];
    let checkpoints = 0;
    for (let turn = 0; turn < 25; turn++) {
      sent.push({ role: "user", content: `turn ${turn} ${"y".repeat(1_200)}` });
      const { data, response } = await openai.responses
        .create({ model: "m", input: sent as never })
        .withResponse();
      if (response.headers.get("x-ctxkit-checkpoint") === "true") checkpoints++;
      sent.push({ role: "assistant", content: data.output_text });
    }
    expect(checkpoints).toBeGreaterThan(0);
    const last = harness.upstream.requests.at(-1)!.body.input;
    expect(JSON.stringify(last).length).toBeLessThan(JSON.stringify(sent).length);
    const all = await harness.store.loadMessages("acme/long-1", { strategy: "all" });
    expect(all.filter((message) => message.kind === undefined)).toHaveLength(50);
  });
  it("a stream the upstream cuts short ends with an error event and stores nothing; X-Ctxkit-Mode: stateless stores nothing", async () => {
    const { harness, client } = await setup({
      responses: [{ text: "a long answer that never ends", chunkSize: 2, disconnectAfterChunks: 6 }, "plain"],
    });
    const stream = await client({ "X-Ctxkit-Session": "cut-1" }).responses.create({
      model: "m",
      input: "Hi",
      stream: true,
    });
    const types: string[] = [];
    await expect(
      (async () => {
        for await (const event of stream) types.push(event.type);
      })(),
    ).rejects.toThrow();
    expect(types).not.toContain("response.completed");
    expect(await harness.store.getSession("acme/cut-1")).toBeUndefined();

    const answer = await client({ "X-Ctxkit-Session": "s-1", "X-Ctxkit-Mode": "stateless" }).responses.create(
      {
        model: "m",
        input: "Hi",
      },
    );
    expect(answer.output_text).toBe("plain");
    expect((await harness.store.listSessions()).sessions).toHaveLength(0);
  });
});
