import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateText, stepCountIs, type ModelMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { afterEach, describe, expect, it } from "vitest";
import type { ContextEngine } from "../../engine/context-engine.ts";
import type { PreparedRequest } from "../../engine/prepared-request.ts";
import { MemorySessionStore } from "../../store/memory/index.ts";
import { textChars } from "../shared/text-chars.test-helpers.ts";
import { openSqliteSessionStore } from "../../store/sqlite/index.ts";
import { ctxkitSessionSteps } from "./session-steps.ts";
import { engineOver, readFile, readingModel, textOf, WINDOW } from "./reading-agent.test-helpers.ts";

/** One conversation as an app keeps it: the messages so far, grown by each call's response. */
async function ask(
  model: MockLanguageModelV4,
  engine: ContextEngine,
  chat: { id: string; messages: ModelMessage[] },
  question: string,
  requests: PreparedRequest[] = [],
): Promise<string> {
  chat.messages.push({ role: "user", content: question });
  const tools = { read_file: readFile };
  const result = await generateText({
    model,
    system: "You read files.",
    tools,
    messages: chat.messages,
    stopWhen: stepCountIs(4),
    ...ctxkitSessionSteps({
      engine,
      sessionId: chat.id,
      tools,
      onRequest: (request) => requests.push(request),
    }),
  });
  chat.messages.push(...result.responseMessages);
  return result.text;
}

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

describe("ctxkitSessionSteps", () => {
  it("keeps interleaved conversations apart, each governed and stored with its replies and usage", async () => {
    const store = new MemorySessionStore();
    const requests: PreparedRequest[] = [];
    const engine = await engineOver(store);
    const model = readingModel();
    const chats = {
      a: { id: "chat-a", messages: [] as ModelMessage[] },
      b: { id: "chat-b", messages: [] as ModelMessage[] },
    };
    for (let turn = 1; turn <= 10; turn++) {
      for (const name of ["a", "b"] as const) {
        const question = `${name} question ${turn} ${"why ".repeat(turn)}`;
        expect(await ask(model, engine, chats[name], question, requests)).toBe(`Answered: ${question}`);
      }
    }
    expect(model.doGenerateCalls).toHaveLength(40);
    for (const call of model.doGenerateCalls) {
      const question = textOf(call.prompt.findLast((message) => message.role === "user")!);
      const other = question.startsWith("a ") ? "b question" : "a question";
      expect(JSON.stringify(call.prompt)).not.toContain(other);
      expect(textChars(call.prompt) / 4).toBeLessThan(WINDOW);
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
      expect(stored[2]!.content[0]).toMatchObject({ type: "tool-result", callId: expect.any(String) });
    }
  });

  it("sends after a restart before every call exactly what a process that never restarted sends", async () => {
    const directory = mkdtempSync(join(tmpdir(), "ctxkit-ai-sdk-steps-"));
    directories.push(directory);
    const steadyStore = await openSqliteSessionStore({ path: join(directory, "steady.db") });
    const steadyEngine = await engineOver(steadyStore);
    const steadyModel = readingModel();
    const restartedModel = readingModel();
    const steadyChat = { id: "chat", messages: [] as ModelMessage[] };
    const restartedChat = { id: "chat", messages: [] as ModelMessage[] };
    const restartedRequests: PreparedRequest[] = [];
    for (let turn = 1; turn <= 12; turn++) {
      const question = `question ${turn} ${"why ".repeat(turn)}`;
      await ask(steadyModel, steadyEngine, steadyChat, question);
      const store = await openSqliteSessionStore({ path: join(directory, "restarted.db") });
      await ask(restartedModel, await engineOver(store), restartedChat, question, restartedRequests);
      await store.close();
    }
    await steadyStore.close();
    expect(restartedModel.doGenerateCalls.map((call) => call.prompt)).toEqual(
      steadyModel.doGenerateCalls.map((call) => call.prompt),
    );
    expect(restartedRequests.filter((request) => request.checkpoint).length).toBeGreaterThan(0);
  });

  it("records nothing twice when the app sends a call again after it failed part-way", async () => {
    const store = new MemorySessionStore();
    const engine = await engineOver(store);
    const reading = readingModel();
    let failures = 1;
    const model = new MockLanguageModelV4({
      doGenerate: async (options) => {
        if (options.prompt.at(-1)?.role === "tool" && failures-- > 0) throw new Error("503 overloaded");
        return reading.doGenerate(options);
      },
    });
    const chat = { id: "chat", messages: [] as ModelMessage[] };
    await expect(ask(model, engine, chat, "first question")).rejects.toThrow("503");
    // The app sends the same messages again (a retry, useChat's regenerate): the question is asked once.
    chat.messages.pop();
    expect(await ask(model, engine, chat, "first question")).toBe("Answered: first question");
    expect(model.doGenerateCalls.at(-1)!.prompt.map((message) => message.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
    ]);
    expect(await ask(model, engine, chat, "second question")).toBe("Answered: second question");
    const stored = await store.loadMessages("chat", { strategy: "all" });
    expect(stored.map((message) => `${message.role}:${message.content[0]!.type}`)).toEqual([
      "user:text",
      "assistant:tool-call",
      "tool:tool-result",
      "assistant:text",
      "user:text",
      "assistant:tool-call",
      "tool:tool-result",
      "assistant:text",
    ]);
  });

  it("reports a step it could not commit: the next step throws it, and settled() rejects with it", async () => {
    class FailingStore extends MemorySessionStore {
      appends = 0;
      readonly failing = new Set<number>();
      override appendTurn(...args: Parameters<MemorySessionStore["appendTurn"]>) {
        if (this.failing.has(++this.appends)) return Promise.reject(new Error("disk I/O error"));
        return super.appendTurn(...args);
      }
    }
    const store = new FailingStore();
    const engine = await engineOver(store);
    const model = readingModel();
    const tools = { read_file: readFile };
    const messages: ModelMessage[] = [{ role: "user", content: "first question" }];
    const call = async () => {
      const steps = ctxkitSessionSteps({ engine, sessionId: "chat", tools });
      const result = generateText({ model, tools, messages, stopWhen: stepCountIs(4), ...steps });
      return { result: await result.catch((error: unknown) => error), settled: steps.settled() };
    };
    // The tool step's commit fails: the loop stops with that error.
    store.failing.add(1);
    const first = await call();
    expect(first.result).toMatchObject({ message: "disk I/O error" });
    await expect(first.settled).rejects.toThrow("disk I/O error");
    // The final answer's commit fails: the call resolves, settled() tells.
    store.failing.add(3);
    const second = await call();
    expect(second.result).toMatchObject({ text: "Answered: first question" });
    await expect(second.settled).rejects.toThrow("disk I/O error");
    // Sent again, the call records what is missing only.
    const third = await call();
    expect(third.result).toMatchObject({ text: "Answered: first question" });
    await third.settled;
    const stored = await store.loadMessages("chat", { strategy: "all" });
    expect(stored.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"]);
  });
});
