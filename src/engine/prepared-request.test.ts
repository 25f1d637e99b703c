import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { LanguageModelV4GenerateResult } from "@ai-sdk/provider";
import { generateText, streamText } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { afterEach, describe, expect, it } from "vitest";
import type OpenAI from "openai";
import { fromAiSdk } from "../formats/providers/ai-sdk/from-ai-sdk.ts";
import { toAnthropic } from "../formats/providers/anthropic/to-anthropic.ts";
import { fromOpenAIChat } from "../formats/providers/openai-chat/index.ts";
import { DEFAULT_PRICES } from "../pricing/model-prices.ts";
import { conversationDump } from "../store/jsonl/conversation-dump.ts";
import { breakpointIndices } from "../replay/breakpoint-placement.ts";
import { sequentialIds } from "../model/ids.ts";
import { resolveModel } from "../providers/resolve-model.ts";
import { MemorySessionStore } from "../store/memory/index.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { createContextEngine } from "./context-engine.ts";
import { PreparedRequest, type ToolDefinition } from "./prepared-request.ts";
import { preset } from "../governance/presets.ts";
import type { PresetOptionsInput } from "../governance/preset-options.ts";

const SYSTEM = "You are a careful coding agent. Read a file before you edit it. ".repeat(80);
const TOOLS: ToolDefinition[] = [
  { name: "read_file", description: "Read a file", inputSchema: { type: "object" } },
  { name: "bash", inputSchema: { type: "object", properties: { command: { type: "string" } } } },
];

async function engine(knobs: PresetOptionsInput = {}, store = new MemorySessionStore()) {
  return createContextEngine({
    store,
    pipeline: preset("default", knobs),
    contextWindow: 100_000,
    maxOutputTokens: 2_000,
    tokenCounter: new FakeTokenCounter(),
    summarizer: new FakeSummarizer(),
    ids: sequentialIds(),
    clock: () => new Date("2026-03-01T12:00:00Z"),
  });
}

/** A session inside a run: user, assistant (tool call), tool result, assistant (tool call), tool result. */
async function midRun(policy = {}, id = "s1") {
  const session = (await engine(policy)).session(id);
  await session.addUser("Fix the failing test");
  for (const [index, path] of ["a.ts", "b.ts"].entries()) {
    await session.prepare({ system: SYSTEM, tools: TOOLS });
    await session.recordAssistant({
      content: [{ type: "tool-call", id: `c${index}`, name: "read_file", input: { path } }],
    });
    await session.recordToolResults([
      { callId: `c${index}`, toolName: "read_file", content: `// ${path}\n${"const a = 1;\n".repeat(150)}` },
    ]);
  }
  return session;
}

/** Where the cache_control markers of an Anthropic request body sit. */
function markerPlaces(body: {
  tools?: { cache_control?: unknown }[];
  system?: unknown;
  messages: { content: unknown }[];
}): string[] {
  const places: string[] = [];
  body.tools?.forEach((tool, index) => tool.cache_control !== undefined && places.push(`tools[${index}]`));
  if (Array.isArray(body.system))
    (body.system as { cache_control?: unknown }[]).forEach(
      (block, index) => block.cache_control !== undefined && places.push(`system[${index}]`),
    );
  body.messages.forEach((message, index) => {
    if (!Array.isArray(message.content)) return;
    (message.content as { cache_control?: unknown }[]).forEach(
      (block, position) =>
        block.cache_control !== undefined && places.push(`messages[${index}][${position}]`),
    );
  });
  return places;
}

describe("PreparedRequest.toAnthropic", () => {
  it("sends the tools and breakpoints on the system prompt, the governor's cache anchor and the two sliding messages", async () => {
    const request = await (await midRun()).prepare({ system: SYSTEM, tools: TOOLS });
    const body = request.toAnthropic({ model: "claude-sonnet-4-5" });
    expect(body.tools?.map((tool) => tool.name)).toEqual(["read_file", "bash"]);
    expect(body.tools?.[1]?.input_schema).toEqual(TOOLS[1]!.inputSchema);
    // user 0, assistant 1, tool result 2, assistant 3, tool result 4. The governor's anchor (the prefix its next
    // rewrite keeps) is the first assistant message; the tools alone are below 1,024 tokens.
    expect(request.cacheAnchors).toEqual([1]);
    expect(markerPlaces(body)).toEqual(["system[0]", "messages[1][0]", "messages[2][0]", "messages[4][0]"]);
    // Tool definitions long enough to be cached on their own come after the anchor: the four are taken.
    const documented = [...TOOLS, { name: "edit", description: "Replace text in a file. ".repeat(300) }];
    const withTools = await (await midRun({}, "s2")).prepare({ system: SYSTEM, tools: documented });
    expect(markerPlaces(withTools.toAnthropic({ model: "claude-sonnet-4-5" }))).toEqual([
      "system[0]",
      "messages[1][0]",
      "messages[2][0]",
      "messages[4][0]",
    ]);
  });

  it("puts its breakpoints where the replay prices them (the replay meters what is sent)", async () => {
    const session = await midRun();
    for (let step = 0; step < 3; step++) {
      const request = await session.prepare({ system: SYSTEM });
      // One Anthropic message per ctxkit message here (no neighbours merged), so segment i + 1 is messages[i].
      const priced = breakpointIndices("ctxkit", request.messages, 1, request.cacheAnchors).map((segment) =>
        segment === 0 ? "system[0]" : `messages[${segment - 1}]`,
      );
      const sent = markerPlaces(request.toAnthropic()).map((place) => place.replace(/\]\[\d+\]$/, "]"));
      expect(sent).toEqual(priced);
      await session.recordAssistant({
        content: [{ type: "tool-call", id: `d${step}`, name: "read_file", input: { path: `c${step}.ts` } }],
      });
      await session.recordToolResults([
        { callId: `d${step}`, toolName: "read_file", content: "x".repeat(4_000) },
      ]);
    }
  });

  it("an anchor whose message the converter merged with the next is marked where its prefix ends", async () => {
    const session = await midRun();
    await session.addUser("Now run the tests");
    for (const id of ["t1", "t2"]) {
      await session.prepare({ system: SYSTEM });
      await session.recordAssistant({
        content: [{ type: "tool-call", id, name: "bash", input: { cmd: "npm test" } }],
      });
      await session.recordToolResults([{ callId: id, toolName: "bash", content: "ok" }]);
    }
    const request = await session.prepare({ system: SYSTEM });
    const body = request.toAnthropic();
    // The tool result (view 4) and the user text after it (view 5) are one Anthropic user message: an anchor on
    // the tool result marks its block, not the text after it.
    const merged = body.messages[4]!.content as { type: string; cache_control?: unknown }[];
    expect(merged.map((block) => block.type)).toEqual(["tool_result", "text"]);
    const anchored = new PreparedRequest({
      sessionId: request.sessionId,
      payload: request.payload,
      tools: [],
      tokens: request.tokens,
      events: [],
      inspection: request.inspection,
      checkpoint: false,
      loop: undefined,
      cacheAnchors: [4],
    });
    const marked = anchored.toAnthropic().messages[4]!.content as { cache_control?: unknown }[];
    expect(marked[0]!.cache_control).toEqual({ type: "ephemeral" });
    expect(marked[1]!.cache_control).toBeUndefined();
    // Through the AI SDK a marker covers a whole message: the tool result is its own message there.
    const aiSdk = anchored.toAiSdk({ model: "anthropic/claude-sonnet-4-5" }).messages;
    expect(aiSdk[4]!.role).toBe("tool");
    expect(aiSdk[4]!.providerOptions?.["anthropic"]?.["cacheControl"]).toEqual({ type: "ephemeral" });
    expect(aiSdk[5]!.providerOptions?.["anthropic"]?.["cacheControl"]).toBeUndefined();
  });

  it("keeps the anchor on its message when the stored history holds system messages (the payload leaves them out)", async () => {
    const anchored = async (withSystem: boolean) => {
      const chat: OpenAI.ChatCompletionMessageParam[] = [
        ...(withSystem ? [{ role: "system" as const, content: "You are a coding agent." }] : []),
        { role: "user", content: "Fix the failing test" },
      ];
      for (let index = 0; index < 3; index++) {
        chat.push({
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: `c${index}`,
              type: "function",
              function: { name: "read_file", arguments: `{"i":${index}}` },
            },
          ],
        });
        chat.push({ role: "tool", tool_call_id: `c${index}`, content: `const v${index} = 1;\n`.repeat(150) });
      }
      const store = new MemorySessionStore();
      const messages = fromOpenAIChat(chat, { sessionId: "x" });
      await store.restoreSession(
        conversationDump(
          { id: "x", format: "openai-chat", source: "test", messages },
          { now: "2026-03-01T12:00:00Z", prices: DEFAULT_PRICES },
        ),
      );
      const request = await (await engine({}, store)).session("x").prepare({ system: SYSTEM });
      expect(request.cacheAnchors.length).toBeGreaterThan(0);
      return request.cacheAnchors.map((anchor) => request.messages[anchor]!.content);
    };
    expect(await anchored(true)).toEqual(await anchored(false));
  });

  it("without breakpoints is exactly the converter's payload plus the tools", async () => {
    const request = await (await midRun()).prepare({ system: SYSTEM, tools: TOOLS });
    const plain = request.toAnthropic({ cacheBreakpoints: false });
    expect(JSON.stringify(plain)).not.toContain("cache_control");
    const { tools, ...conversation } = plain;
    expect(tools).toHaveLength(2);
    const system = {
      ...request.messages[0]!,
      role: "system" as const,
      content: [{ type: "text" as const, text: request.system }],
    };
    expect(conversation).toEqual(toAnthropic([system, ...request.messages]));
  });

  it("puts the newest breakpoint on the tool result before the budget-exit notice, not on the notice", async () => {
    const request = await (await midRun({ budgetExitShare: 0.01 })).prepare({ system: SYSTEM, tools: TOOLS });
    expect(request.messages.at(-1)?.metadata?.["notice"]).toBe("budget-exit");
    const body = request.toAnthropic();
    const last = body.messages.at(-1)!.content as { type: string; cache_control?: unknown }[];
    expect(last.map((block) => block.type)).toEqual(["tool_result", "text"]);
    expect(markerPlaces(body)).toEqual(["system[0]", "messages[1][0]", "messages[2][0]", "messages[4][0]"]);
    expect(last[1]!.cache_control).toBeUndefined();
  });

  it("uses the 1-hour TTL when asked", async () => {
    const request = await (await midRun()).prepare({ system: SYSTEM, tools: TOOLS });
    const body = request.toAnthropic({ cacheTtl: "1h" });
    expect(JSON.stringify(body).match(/"cache_control":\{"type":"ephemeral","ttl":"1h"\}/g)).toHaveLength(4);
  });
});

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A loopback server answering Anthropic Messages requests (JSON or SSE) and recording their bodies. */
async function anthropicServer(): Promise<{ url: string; bodies: Record<string, unknown>[] }> {
  const bodies: Record<string, unknown>[] = [];
  const server = createServer((request, response) => {
    let raw = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (raw += chunk));
    request.on("end", () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      bodies.push(body);
      const usage = {
        input_tokens: 900,
        output_tokens: 2,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      };
      const message = { id: "msg_1", type: "message", role: "assistant", model: String(body["model"]) };
      if (body["stream"] !== true) {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(
          JSON.stringify({
            ...message,
            content: [{ type: "text", text: "Done." }],
            stop_reason: "end_turn",
            stop_sequence: null,
            usage,
          }),
        );
        return;
      }
      const events: [string, unknown][] = [
        [
          "message_start",
          { type: "message_start", message: { ...message, content: [], stop_reason: null, usage } },
        ],
        [
          "content_block_start",
          { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
        ],
        [
          "content_block_delta",
          { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Done." } },
        ],
        ["content_block_stop", { type: "content_block_stop", index: 0 }],
        [
          "message_delta",
          { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } },
        ],
        ["message_stop", { type: "message_stop" }],
      ];
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.end(
        events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join(""),
      );
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, bodies };
}

describe("PreparedRequest.toAiSdk", () => {
  it("an engine request sent to an Anthropic model carries the breakpoints on the wire (generate and stream)", async () => {
    const fake = await anthropicServer();
    const model = await resolveModel(`anthropic:claude-sonnet-4-5@${fake.url}`, {
      env: { ANTHROPIC_API_KEY: "test-key" },
    });
    const request = await (await midRun()).prepare({ system: SYSTEM });
    const generated = await generateText({ model, ...request.toAiSdk({ model }), maxRetries: 0 });
    expect(generated.text).toBe("Done.");
    const streamed = streamText({ model, ...request.toAiSdk({ model }), maxRetries: 0 });
    expect(await streamed.text).toBe("Done.");
    expect(fake.bodies).toHaveLength(2);
    for (const body of fake.bodies) {
      const sent = body as Parameters<typeof markerPlaces>[0];
      // user 0, assistant 1, tool result 2, assistant 3, tool result 4 (the AI SDK puts tool results in user turns).
      expect(markerPlaces(sent)).toEqual(["system[0]", "messages[1][0]", "messages[2][0]", "messages[4][0]"]);
      expect((sent.messages[4]!.content as { type: string }[])[0]!.type).toBe("tool_result");
    }
  });

  it("sends the providerOptions of a stored AI SDK conversation to the wire, with ctxkit's breakpoints added", async () => {
    const code = (path: string) => `// ${path}\n${"const a = 1;\n".repeat(50)}`;
    const messages = fromAiSdk(
      [
        {
          role: "user",
          content: [
            {
              type: "file",
              mediaType: "text/plain",
              data: { type: "text", text: "The parser must accept trailing commas. ".repeat(5) },
              // Read by the AI SDK's Anthropic provider: the document's title and context, and the caller's marker.
              providerOptions: {
                anthropic: { title: "Spec v2", context: "the spec under review" },
                acme: { tier: 2 },
              },
            },
            {
              type: "text",
              text: "Review the code against the spec.",
              providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } },
            },
          ],
        },
        ...["a.ts", "b.ts"].flatMap((path, index) => [
          {
            role: "assistant" as const,
            content: [
              { type: "tool-call" as const, toolCallId: `c${index}`, toolName: "read_file", input: { path } },
            ],
          },
          {
            role: "tool" as const,
            content: [
              {
                type: "tool-result" as const,
                toolCallId: `c${index}`,
                toolName: "read_file",
                output: { type: "text" as const, value: code(path) },
              },
            ],
          },
        ]),
      ],
      { sessionId: "review" },
    );
    const store = new MemorySessionStore();
    await store.restoreSession(
      conversationDump(
        { id: "review", format: "ai-sdk", source: "test", messages },
        { now: "2026-03-01T12:00:00Z", prices: DEFAULT_PRICES },
      ),
    );
    const fake = await anthropicServer();
    const model = await resolveModel(`anthropic:claude-sonnet-4-5@${fake.url}`, {
      env: { ANTHROPIC_API_KEY: "test-key" },
    });
    const request = await (await engine({}, store)).session("review").prepare({ system: SYSTEM });
    const prompt = request.toAiSdk({ model });
    // The caller's options are all there; ctxkit added markers on whole messages only.
    expect(prompt.messages[0]!.content).toEqual([
      expect.objectContaining({
        providerOptions: {
          anthropic: { title: "Spec v2", context: "the spec under review" },
          acme: { tier: 2 },
        },
      }),
      expect.objectContaining({ providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } }),
    ]);
    await generateText({ model, ...prompt, maxRetries: 0 });
    const sent = fake.bodies[0] as Parameters<typeof markerPlaces>[0];
    expect(sent.messages[0]!.content).toEqual([
      expect.objectContaining({ type: "document", title: "Spec v2", context: "the spec under review" }),
      expect.objectContaining({ type: "text", cache_control: { type: "ephemeral" } }),
    ]);
    // The caller's marker stays and counts: ctxkit adds three of its own (the system prompt and the newest
    // message among them), four in all.
    const places = markerPlaces(sent);
    expect(places).toHaveLength(4);
    expect(places).toEqual(expect.arrayContaining(["system[0]", "messages[0][1]", "messages[4][0]"]));
  });

  it("gives an OpenAI model the session id as promptCacheKey, and other models nothing", async () => {
    const reply = async (): Promise<LanguageModelV4GenerateResult> => ({
      content: [{ type: "text", text: "ok" }],
      finishReason: { unified: "stop", raw: "stop" },
      usage: {
        inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 1, text: 1, reasoning: 0 },
      },
      warnings: [],
    });
    const openai = new MockLanguageModelV4({
      provider: "openai.responses",
      modelId: "gpt-4.1",
      doGenerate: reply,
    });
    const request = await (await midRun({}, "support-42")).prepare({ system: SYSTEM });
    await generateText({ model: openai, ...request.toAiSdk({ model: openai }) });
    expect(openai.doGenerateCalls[0]!.providerOptions?.["openai"]?.["promptCacheKey"]).toBe("support-42");
    expect(request.toAiSdk({ model: openai, promptCacheKey: false }).providerOptions).toBeUndefined();
    const google = new MockLanguageModelV4({ provider: "google.generative-ai", modelId: "gemini-2.5-pro" });
    const neutral = request.toAiSdk({ model: google });
    expect(neutral.providerOptions).toBeUndefined();
    expect(JSON.stringify(neutral)).not.toContain("cacheControl");
  });
  it("counts the tokens a caller sends besides the system prompt and tools (fixedTokens) in the request's fixed part", async () => {
    const session = (await engine()).session("fixed");
    await session.addUser("Hello");
    const plain = await session.preview({ system: "Be brief." });
    const framed = await session.preview({ system: "Be brief.", fixedTokens: 700 });
    expect(framed.tokens.fixed).toBe(plain.tokens.fixed + 700);
    expect(framed.tokens.total).toBe(plain.tokens.total + 700);
  });
});
