import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { anthropic } from "@ai-sdk/anthropic";
import type {
  LanguageModelV4Content,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
} from "@ai-sdk/provider";
import { generateText, stepCountIs, streamText, wrapLanguageModel, type ModelMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { afterEach, describe, expect, it } from "vitest";
import type { ContextEngine } from "../../engine/context-engine.ts";
import type { PreparedRequest } from "../../engine/prepared-request.ts";
import { MemorySessionStore } from "../../store/memory/index.ts";
import { openSqliteSessionStore } from "../../store/sqlite/index.ts";
import { ctxkitSessionMiddleware } from "./session-middleware.ts";
import { engineOver, readFile, readingModel, textOf, usage, WINDOW } from "./reading-agent.test-helpers.ts";

/** One conversation as an app keeps it: the messages so far, grown by each call's response. */
async function ask(
  model: Parameters<typeof wrapLanguageModel>[0]["model"],
  engine: ContextEngine,
  chat: { id: string; messages: ModelMessage[] },
  question: string,
  requests: PreparedRequest[] = [],
): Promise<string> {
  chat.messages.push({ role: "user", content: question });
  const result = await generateText({
    model: wrapLanguageModel({
      model,
      middleware: ctxkitSessionMiddleware({ engine, onRequest: (request) => requests.push(request) }),
    }),
    system: "You read files.",
    tools: { read_file: readFile },
    messages: chat.messages,
    stopWhen: stepCountIs(4),
    providerOptions: { ctxkit: { sessionId: chat.id } },
  });
  chat.messages.push(...result.responseMessages);
  return result.text;
}

function streamOf(parts: LanguageModelV4StreamPart[]) {
  return {
    stream: new ReadableStream({
      start: (controller) => {
        for (const part of parts) controller.enqueue(part);
        controller.close();
      },
    }),
  };
}

function textParts(id: string, text: string): LanguageModelV4StreamPart[] {
  return [
    { type: "text-start", id },
    { type: "text-delta", id, delta: text },
    { type: "text-end", id },
  ];
}

function finish(reason: "stop" | "tool-calls"): LanguageModelV4StreamPart {
  return { type: "finish", usage, finishReason: { unified: reason, raw: reason } };
}

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

describe("ctxkitSessionMiddleware", () => {
  it("keeps two interleaved conversations through one wrapped model apart, each governed and stored", async () => {
    const store = new MemorySessionStore();
    const requests: PreparedRequest[] = [];
    const engine = await engineOver(store);
    const model = readingModel();
    const middleware = ctxkitSessionMiddleware({ engine, onRequest: (request) => requests.push(request) });
    const wrapped = wrapLanguageModel({ model, middleware });
    const chats = {
      a: { id: "chat-a", messages: [] as ModelMessage[] },
      b: { id: "chat-b", messages: [] as ModelMessage[] },
    };
    for (let turn = 1; turn <= 10; turn++) {
      for (const name of ["a", "b"] as const) {
        const chat = chats[name];
        chat.messages.push({ role: "user", content: `${name} question ${turn} ${"why ".repeat(turn)}` });
        const result = await generateText({
          model: wrapped,
          system: "You read files.",
          tools: { read_file: readFile },
          messages: chat.messages,
          stopWhen: stepCountIs(4),
          providerOptions: { ctxkit: { sessionId: chat.id } },
        });
        chat.messages.push(...result.responseMessages);
        expect(result.text).toBe(`Answered: ${name} question ${turn} ${"why ".repeat(turn)}`);
      }
    }
    expect(model.doGenerateCalls).toHaveLength(40);
    for (const call of model.doGenerateCalls) {
      const question = textOf(call.prompt.findLast((message) => message.role === "user")!);
      const other = question.startsWith("a ") ? "b question" : "a question";
      expect(JSON.stringify(call.prompt)).not.toContain(other);
      expect(JSON.stringify(call.prompt).length / 4).toBeLessThan(WINDOW);
      // ctxkit's own provider options never reach the provider.
      expect(call.providerOptions?.["ctxkit"]).toBeUndefined();
    }
    expect(requests.some((request) => request.checkpoint)).toBe(true);
    for (const name of ["a", "b"]) {
      const stored = (await store.loadMessages(`chat-${name}`, { strategy: "all" })).filter(
        (message) => message.kind === undefined,
      );
      expect(stored.map((message) => message.role)).toEqual(
        Array.from({ length: 10 }, () => ["user", "assistant", "tool", "assistant"]).flat(),
      );
      expect(stored[1]!.usage).toEqual({ input: 100, output: 10 });
      expect(
        stored.every(
          (message) =>
            JSON.stringify(message.content).includes(`${name} question`) || message.role !== "user",
        ),
      ).toBe(true);
    }
  });

  it("sends after a restart before every call exactly what a process that never restarted sends", async () => {
    const directory = mkdtempSync(join(tmpdir(), "ctxkit-ai-sdk-session-"));
    directories.push(directory);
    const steady = { store: await openSqliteSessionStore({ path: join(directory, "steady.db") }) };
    const steadyEngine = await engineOver(steady.store);
    const steadyModel = readingModel();
    const restartedModel = readingModel();
    const steadyChat = { id: "chat", messages: [] as ModelMessage[] };
    const restartedChat = { id: "chat", messages: [] as ModelMessage[] };
    const restartedRequests: PreparedRequest[] = [];
    for (let turn = 1; turn <= 12; turn++) {
      const question = `question ${turn} ${"why ".repeat(turn)}`;
      await ask(steadyModel, steadyEngine, steadyChat, question);
      // A new process for every question: a new store handle and engine on the same file.
      const store = await openSqliteSessionStore({ path: join(directory, "restarted.db") });
      await ask(restartedModel, await engineOver(store), restartedChat, question, restartedRequests);
      await store.close();
    }
    await steady.store.close();
    expect(restartedModel.doGenerateCalls.map((call) => call.prompt)).toEqual(
      steadyModel.doGenerateCalls.map((call) => call.prompt),
    );
    // The comparison covered governed requests: the history outgrew the window, checkpoints were taken.
    expect(restartedRequests.filter((request) => request.checkpoint).length).toBeGreaterThan(0);
    const total = steadyChat.messages.reduce((sum, message) => sum + JSON.stringify(message).length, 0);
    expect(total / 4).toBeGreaterThan(WINDOW);
  });

  it("records a streamed reply once the stream has finished", async () => {
    const store = new MemorySessionStore();
    const engine = await engineOver(store);
    const parts: LanguageModelV4StreamPart[] = [
      { type: "stream-start", warnings: [] },
      { type: "text-start", id: "t1" },
      { type: "text-delta", id: "t1", delta: "Hello " },
      { type: "text-delta", id: "t1", delta: "there" },
      { type: "text-end", id: "t1" },
      { type: "finish", usage, finishReason: { unified: "stop", raw: "stop" } },
    ];
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: new ReadableStream({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      }),
    });
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: ctxkitSessionMiddleware({ engine }) }),
      prompt: "Say hello",
      providerOptions: { ctxkit: { sessionId: "streamed" } },
    });
    expect(await result.text).toBe("Hello there");
    await result.consumeStream();
    const stored = await store.loadMessages("streamed");
    expect(stored.map((message) => [message.role, message.content])).toEqual([
      ["user", [{ type: "text", text: "Say hello" }]],
      ["assistant", [{ type: "text", text: "Hello there" }]],
    ]);
    expect(stored[1]!.usage).toEqual({ input: 100, output: 10 });
  });

  it("keeps an Anthropic thinking signature sent on a delta, and redacted data sent on the start", async () => {
    const store = new MemorySessionStore();
    const engine = await engineOver(store);
    const model = new MockLanguageModelV4({
      provider: "anthropic.messages",
      doStream: async ({ prompt }) =>
        streamOf(
          prompt.at(-1)?.role === "tool"
            ? [...textParts("t", "done"), finish("stop")]
            : [
                { type: "reasoning-start", id: "0" },
                { type: "reasoning-delta", id: "0", delta: "Let me think." },
                {
                  type: "reasoning-delta",
                  id: "0",
                  delta: "",
                  providerMetadata: { anthropic: { signature: "U0lH" } },
                },
                { type: "reasoning-end", id: "0" },
                {
                  type: "reasoning-start",
                  id: "1",
                  providerMetadata: { anthropic: { redactedData: "UkVE" } },
                },
                { type: "reasoning-end", id: "1", providerMetadata: { other: { note: "kept" } } },
                {
                  type: "tool-call",
                  toolCallId: "c1",
                  toolName: "read_file",
                  input: JSON.stringify({ path: "a.ts" }),
                },
                finish("tool-calls"),
              ],
        ),
    });
    const result = streamText({
      model: wrapLanguageModel({
        model,
        middleware: ctxkitSessionMiddleware({ engine, defaultSessionId: "s" }),
      }),
      tools: { read_file: readFile },
      prompt: "read a.ts",
      stopWhen: stepCountIs(3),
    });
    expect(await result.text).toBe("done");
    const assistant = model.doStreamCalls[1]!.prompt.find((message) => message.role === "assistant");
    expect(assistant?.content.slice(0, 2)).toEqual([
      { type: "reasoning", text: "Let me think.", providerOptions: { anthropic: { signature: "U0lH" } } },
      {
        type: "reasoning",
        text: "",
        providerOptions: { anthropic: { redactedData: "UkVE" }, other: { note: "kept" } },
      },
    ]);
    const stored = (await store.loadMessages("s")).find((message) => message.role === "assistant");
    expect(stored?.content[0]).toEqual({
      type: "reasoning",
      text: "Let me think.",
      signature: "U0lH",
    });
  });

  for (const mode of ["generate", "stream"] as const)
    it(`keeps provider-executed tool calls and results and generated files in place (${mode})`, async () => {
      const store = new MemorySessionStore();
      const engine = await engineOver(store);
      const png = Buffer.from("89504e470d0a1a0a", "hex").toString("base64");
      const reply: LanguageModelV4Content[] = [
        {
          type: "tool-call",
          toolCallId: "ws1",
          toolName: "web_search",
          input: JSON.stringify({ query: "cats" }),
          providerExecuted: true,
        },
        {
          type: "tool-result",
          toolCallId: "ws1",
          toolName: "web_search",
          result: [{ type: "web_search_result", url: "https://a.test", encryptedContent: "RQ==" }],
        },
        { type: "text", text: "Here is a cat." },
        { type: "file", mediaType: "image/png", data: { type: "data", data: png } },
        {
          type: "tool-call",
          toolCallId: "c1",
          toolName: "read_file",
          input: JSON.stringify({ path: "a.ts" }),
        },
      ];
      const answered = (prompt: LanguageModelV4Prompt) => prompt.at(-1)?.role === "tool";
      const model = new MockLanguageModelV4({
        provider: "anthropic.messages",
        doGenerate: async ({ prompt }) => ({
          content: answered(prompt) ? [{ type: "text", text: "done" }] : reply,
          finishReason: answered(prompt)
            ? { unified: "stop", raw: "stop" }
            : { unified: "tool-calls", raw: "" },
          usage,
          warnings: [],
        }),
        doStream: async ({ prompt }) =>
          streamOf(
            answered(prompt)
              ? [...textParts("t", "done"), finish("stop")]
              : [
                  ...reply.flatMap((part): LanguageModelV4StreamPart[] =>
                    part.type === "text" ? textParts("t", part.text) : [part as LanguageModelV4StreamPart],
                  ),
                  finish("tool-calls"),
                ],
          ),
      });
      const tools = {
        read_file: readFile,
        web_search: anthropic.tools.webSearch_20250305({ maxUses: 1 }),
      };
      const wrapped = wrapLanguageModel({
        model,
        middleware: ctxkitSessionMiddleware({ engine, defaultSessionId: "s" }),
      });
      const call = { model: wrapped, tools, prompt: "find a cat", stopWhen: stepCountIs(3) };
      const text = mode === "generate" ? (await generateText(call)).text : await streamText(call).text;
      expect(text).toBe("done");
      const calls = mode === "generate" ? model.doGenerateCalls : model.doStreamCalls;
      const assistant = calls[1]!.prompt.find((message) => message.role === "assistant");
      expect(assistant?.content.map((part) => part.type)).toEqual([
        "tool-call",
        "tool-result",
        "text",
        "file",
        "tool-call",
      ]);
      expect(assistant?.content[0]).toMatchObject({ toolCallId: "ws1", providerExecuted: true });
      expect(assistant?.content[1]).toMatchObject({
        toolCallId: "ws1",
        output: { type: "json", value: [{ type: "web_search_result", url: "https://a.test" }] },
      });
      expect(JSON.stringify(assistant)).toContain(png);
      const stored = (await store.loadMessages("s", { media: "inline" })).find(
        (message) => message.role === "assistant",
      );
      expect(stored?.content.map((block) => block.type)).toEqual([
        "opaque",
        "opaque",
        "text",
        "image",
        "tool-call",
      ]);
      expect(stored?.content[3]).toMatchObject({ type: "image", mediaType: "image/png", data: png });
    });

  it("refuses a call that names no session, and a malformed one, before the model is called", async () => {
    const engine = await engineOver(new MemorySessionStore());
    const model = readingModel();
    const wrapped = wrapLanguageModel({ model, middleware: ctxkitSessionMiddleware({ engine }) });
    await expect(generateText({ model: wrapped, prompt: "hi" })).rejects.toThrow(
      /providerOptions: \{ ctxkit/,
    );
    await expect(
      generateText({ model: wrapped, prompt: "hi", providerOptions: { ctxkit: { sessionId: "" } } }),
    ).rejects.toThrow(/sessionId is empty/);
    expect(model.doGenerateCalls).toHaveLength(0);
  });
});
