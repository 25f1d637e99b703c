import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent, modelRetryMiddleware, tool } from "langchain";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { ContextEngine } from "../../engine/context-engine.ts";
import type { PreparedRequest } from "../../engine/prepared-request.ts";
import type { SessionStore } from "../../store/session-store.ts";
import { MemorySessionStore } from "../../store/memory/index.ts";
import { openSqliteSessionStore } from "../../store/sqlite/index.ts";
import { ctxkitLangChainMiddleware } from "./ctxkit-langchain-middleware.ts";
import { testEngine } from "../shared/test-engine.test-helpers.ts";

const WINDOW = 16_000;
const OUTPUT_LINES = 250;

const readFile = tool(
  async ({ path }: { path: string }) =>
    `// ${path}\n${`export const line = "${path}";\n`.repeat(OUTPUT_LINES)}`,
  { name: "read_file", description: "Reads a file", schema: z.object({ path: z.string() }) },
);

const engineOver = (store: SessionStore, contextWindow = WINDOW): Promise<ContextEngine> =>
  testEngine(store, contextWindow);

function textOf(message: BaseMessage): string {
  return typeof message.content === "string" ? message.content : JSON.stringify(message.content);
}

/**
 * LangChain's fake chat model scripted for `turns` questions: on a question it reads one file, on the file's
 * content it answers naming the question it read it for.
 */
function readingModel(turns: number) {
  const model = fakeModel();
  for (let turn = 0; turn < turns; turn++) {
    model.respond((messages) => {
      const question = textOf(messages.findLast((message) => message.type === "human")!);
      return new AIMessage({
        content: "",
        tool_calls: [{ id: `call_${turn}`, name: "read_file", args: { path: `src/${question.length}.ts` } }],
      });
    });
    model.respond((messages) => {
      const question = textOf(messages.findLast((message) => message.type === "human")!);
      const read = messages.at(-1);
      if (!ToolMessage.isInstance(read)) return new Error("the model expected the file it asked for");
      return new AIMessage({ content: `Answered: ${question}`, usage_metadata: usage() });
    });
  }
  return model;
}

function usage() {
  return { input_tokens: 100, output_tokens: 10, total_tokens: 110 };
}

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

describe("ctxkitLangChainMiddleware", () => {
  it("runs createAgent with tools, stores every message of the thread, and governs what the model sees", async () => {
    const store = new MemorySessionStore();
    const requests: PreparedRequest[] = [];
    const engine = await engineOver(store);
    const model = readingModel(16);
    const agent = createAgent({
      model,
      tools: [readFile],
      systemPrompt: "You read files.",
      middleware: [ctxkitLangChainMiddleware({ engine, onRequest: (request) => requests.push(request) })],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "thread-1" } };
    let state: { messages: BaseMessage[] } = { messages: [] };
    for (let turn = 1; turn <= 16; turn++) {
      const question = `Question ${turn}: ${"why ".repeat(turn)}`;
      state = await agent.invoke({ messages: [{ role: "user", content: question }] }, config);
      expect(textOf(state.messages.at(-1)!)).toBe(`Answered: ${question}`);
    }

    // Every model call fit the window although the thread's tool outputs add up to twice that.
    expect(model.callCount).toBe(32);
    for (const call of model.calls) {
      const chars = call.messages.reduce((sum, message) => sum + textOf(message).length, 0);
      expect(chars / 4).toBeLessThan(WINDOW);
    }
    expect(requests.some((request) => request.checkpoint)).toBe(true);
    expect(requests.flatMap((request) => request.events).map((event) => event.type)).toContain(
      "tool-output-offloaded",
    );
    // The agent's own state is not rewritten: it holds every output in full.
    const outputs = state.messages.filter((message) => ToolMessage.isInstance(message));
    expect(outputs).toHaveLength(16);
    for (const output of outputs) expect(textOf(output).length).toBeGreaterThan(8_000);
    // The store holds the thread: 16 × (question, tool call, tool result, answer), outputs verbatim.
    const stored = await store.loadMessages("thread-1", { strategy: "all" });
    const originals = stored.filter((message) => message.kind === undefined);
    expect(originals.map((message) => message.role)).toEqual(
      Array.from({ length: 16 }, () => ["user", "assistant", "tool", "assistant"]).flat(),
    );
    const firstCall = originals[1]!.content[0];
    expect(firstCall).toMatchObject({ type: "tool-call", id: "call_0", name: "read_file" });
    expect(originals[2]!.content[0]).toMatchObject({
      type: "tool-result",
      callId: "call_0",
      toolName: "read_file",
    });
    expect(originals.at(-1)!.usage).toEqual({ input: 100, output: 10 });
  });

  it("sends the state's own messages (ids, metadata) while governance leaves them alone", async () => {
    const engine = await engineOver(new MemorySessionStore(), 1_000_000);
    const model = readingModel(2);
    const agent = createAgent({
      model,
      tools: [readFile],
      middleware: [ctxkitLangChainMiddleware({ engine })],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "same" } };
    await agent.invoke({ messages: [{ role: "user", content: "first" }] }, config);
    const state = await agent.invoke({ messages: [{ role: "user", content: "second" }] }, config);
    const sent = model.calls.at(-1)!.messages;
    expect(sent).toHaveLength(state.messages.length - 1);
    // Rebuilt messages would carry ctxkit's ids and no usage: these are LangGraph's.
    sent.forEach((message, index) => expect(message).toEqual(state.messages[index]));
    expect(sent.filter((message) => AIMessage.isInstance(message) && message.usage_metadata)).toHaveLength(1);
  });

  it("sends byte-identical requests across a restart: turns 1–5, restart, 6–10 as turns 1–10 in one process", async () => {
    const questions = Array.from(
      { length: 10 },
      (_, index) => `Question ${index + 1}: ${"why ".repeat(index)}`,
    );
    /** Runs the questions through agents over one store and one checkpointer, a new process at each `restarts`. */
    async function requestsOf(restarts: readonly number[]): Promise<string[]> {
      const store = new MemorySessionStore();
      const checkpointer = new MemorySaver();
      const model = readingModel(questions.length);
      let agent: ReturnType<typeof createAgent> | undefined;
      for (const [index, question] of questions.entries()) {
        if (agent === undefined || restarts.includes(index)) {
          const engine = await engineOver(store, 1_000_000);
          agent = createAgent({
            model,
            tools: [readFile],
            systemPrompt: "You read files.",
            middleware: [ctxkitLangChainMiddleware({ engine })],
            checkpointer,
          });
        }
        await agent.invoke(
          { messages: [{ role: "user", content: question }] },
          { configurable: { thread_id: "t" } },
        );
      }
      // LangGraph gives each message a random id (providers never see it): the rest is compared.
      ids.push(...model.calls.flatMap((call) => call.messages.map((message) => message.id ?? "")));
      return model.calls.map((call) =>
        JSON.stringify(
          call.messages.map((message) => ({
            ...message.toDict(),
            data: { ...message.toDict().data, id: undefined },
          })),
        ),
      );
    }
    const ids: string[] = [];
    const straight = await requestsOf([]);
    const restarted = await requestsOf([5]);
    expect(restarted).toHaveLength(20);
    restarted.forEach((request, index) => expect(request).toBe(straight[index]));
    // No message ctxkit made up: every id the model saw is LangGraph's (ctxkit's own are `msg_…`).
    expect(ids.filter((id) => id.startsWith("msg_"))).toEqual([]);
  });

  it("offers recall_tool_output when its notices name it, and the agent's call of it reads the output back", async () => {
    const store = new MemorySessionStore();
    const engine = await engineOver(store);
    const notice = /recall_tool_output\("([^"]+)"/;
    const model = readingModel(8);
    let recalled = "";
    model.respond((messages) => {
      const ref = messages.map(textOf).join("\n").match(notice)?.[1];
      if (ref === undefined) return new Error("no offload notice in the request");
      return new AIMessage({
        content: "",
        tool_calls: [{ id: "recall_1", name: "recall_tool_output", args: { ref } }],
      });
    });
    model.respond((messages) => {
      recalled = textOf(messages.at(-1)!);
      return new AIMessage("Recalled.");
    });
    const agent = createAgent({
      model,
      tools: [readFile],
      middleware: [ctxkitLangChainMiddleware({ engine })],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "recall" } };
    for (let turn = 1; turn <= 8; turn++)
      await agent.invoke(
        { messages: [{ role: "user", content: `Question ${turn}: ${"why ".repeat(turn)}` }] },
        config,
      );
    const state = await agent.invoke(
      { messages: [{ role: "user", content: "Recall the first file." }] },
      config,
    );
    expect(textOf(state.messages.at(-1)!)).toBe("Recalled.");
    // The tool ran for the thread's session: the model got the offloaded file back, line for line.
    expect(recalled).toMatch(/^\[characters 0–\d+ of \d+/);
    expect(recalled).toContain('export const line = "src/');
    expect(model.calls.at(-2)!.options).toBeDefined();
  });

  it("keeps interleaved threads apart through one agent", async () => {
    const store = new MemorySessionStore();
    const engine = await engineOver(store);
    const model = fakeModel();
    for (let call = 0; call < 4; call++)
      model.respond((messages) => new AIMessage(`seen: ${messages.map(textOf).join(" | ")}`));
    // No checkpointer: each invocation's state holds only its new message; the history comes from ctxkit.
    const agent = createAgent({ model, tools: [], middleware: [ctxkitLangChainMiddleware({ engine })] });
    const ask = (thread: string, content: string) =>
      agent.invoke({ messages: [{ role: "user", content }] }, { configurable: { thread_id: thread } });
    await ask("a", "a1");
    await ask("b", "b1");
    await ask("a", "a2");
    const last = await ask("b", "b2");
    expect(textOf(last.messages.at(-1)!)).toBe("seen: b1 | seen: b1 | b2");
    expect(model.calls[2]!.messages.map(textOf)).toEqual(["a1", "seen: a1", "a2"]);
    expect((await store.loadMessages("a")).map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
  });

  it("resumes a thread after a restart from the SQLite file", async () => {
    const directory = mkdtempSync(join(tmpdir(), "ctxkit-langchain-"));
    directories.push(directory);
    const path = join(directory, "agent.db");
    const first = await openSqliteSessionStore({ path });
    const before = readingModel(1);
    await createAgent({
      model: before,
      tools: [readFile],
      middleware: [ctxkitLangChainMiddleware({ engine: await engineOver(first) })],
    }).invoke(
      { messages: [{ role: "user", content: "What is in a.ts?" }] },
      { configurable: { thread_id: "t" } },
    );
    await first.close();

    const second = await openSqliteSessionStore({ path });
    const after = fakeModel().respond((messages) => new AIMessage(`I see ${messages.length} messages`));
    const state = await createAgent({
      model: after,
      tools: [readFile],
      middleware: [ctxkitLangChainMiddleware({ engine: await engineOver(second) })],
    }).invoke({ messages: [{ role: "user", content: "And then?" }] }, { configurable: { thread_id: "t" } });
    await second.close();

    const seen = after.calls[0]!.messages;
    expect(seen.map((message) => message.type)).toEqual(["human", "ai", "tool", "ai", "human"]);
    expect(textOf(seen[0]!)).toBe("What is in a.ts?");
    expect((seen[1] as AIMessage).tool_calls).toEqual([
      // The message the agent got from the model, as it was: the store kept its LangChain form.
      { id: "call_0", name: "read_file", args: { path: "src/16.ts" } },
    ]);
    expect((seen[2] as ToolMessage).tool_call_id).toBe("call_0");
    expect(textOf(seen[2]!)).toContain('export const line = "src/16.ts";');
    expect(textOf(seen[3]!)).toBe("Answered: What is in a.ts?");
    expect(textOf(state.messages.at(-1)!)).toBe("I see 5 messages");
  });

  it("records a retried model call's input once", async () => {
    const store = new MemorySessionStore();
    const engine = await engineOver(store);
    const model = fakeModel()
      .respond(new Error("overloaded"))
      .respond((messages) => new AIMessage(`seen ${messages.length}`));
    const agent = createAgent({
      model,
      tools: [],
      middleware: [
        modelRetryMiddleware({ maxRetries: 1, initialDelayMs: 0, retryOn: () => true }),
        ctxkitLangChainMiddleware({ engine }),
      ],
    });
    const state = await agent.invoke(
      { messages: [{ role: "user", content: "hello" }] },
      { configurable: { thread_id: "retry" } },
    );
    expect(model.callCount).toBe(2);
    expect(textOf(state.messages.at(-1)!)).toBe("seen 1");
    expect((await store.loadMessages("retry")).map((message) => message.role)).toEqual(["user", "assistant"]);
  });

  it("asks for a thread id when the call has none", async () => {
    const engine = await engineOver(new MemorySessionStore());
    const agent = createAgent({
      model: fakeModel().respond(new AIMessage("hi")),
      tools: [],
      middleware: [ctxkitLangChainMiddleware({ engine })],
    });
    await expect(agent.invoke({ messages: [{ role: "user", content: "hello" }] })).rejects.toThrow(
      /thread_id/,
    );
  });
});
