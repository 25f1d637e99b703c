import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
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
