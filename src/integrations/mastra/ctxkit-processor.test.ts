import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type {
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
} from "@ai-sdk/provider";
import { Agent } from "@mastra/core/agent";
import { MASTRA_THREAD_ID_KEY, RequestContext } from "@mastra/core/request-context";
import { createTool } from "@mastra/core/tools";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { ContextEngine } from "../../engine/context-engine.ts";
import type { PreparedRequest } from "../../engine/prepared-request.ts";
import { MemorySessionStore } from "../../store/memory/index.ts";
import type { SessionStore } from "../../store/session-store.ts";
import { openSqliteSessionStore } from "../../store/sqlite/index.ts";
import { CtxkitProcessor } from "./ctxkit-processor.ts";
import { testEngine } from "../shared/test-engine.test-helpers.ts";

const WINDOW = 16_000;

const readFile = createTool({
  id: "read_file",
  description: "Reads a file",
  inputSchema: z.object({ path: z.string() }),
  execute: async ({ path }) => `// ${path}\n${`export const line = "${path}";\n`.repeat(250)}`,
});

const engineOver = (store: SessionStore, contextWindow = WINDOW): Promise<ContextEngine> =>
  testEngine(store, contextWindow);

/** A prompt's tokens as the fake counter counts them: a token per four characters of its strings (not of its JSON). */
function promptTokens(value: unknown): number {
  if (typeof value === "string") return value.length / 4;
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + promptTokens(item), 0);
  if (typeof value === "object" && value !== null)
    return Object.values(value).reduce((sum: number, item) => sum + promptTokens(item), 0);
  return 0;
}

const usage = {
  inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 10, text: 10, reasoning: 0 },
};

function textOf(prompt: LanguageModelV4Prompt[number]): string {
  if (typeof prompt.content === "string") return prompt.content;
  return prompt.content
    .map((part) =>
      part.type === "text"
        ? part.text
        : part.type === "tool-result" && part.output.type === "text"
          ? part.output.value
          : "",
    )
    .join("");
}

/** A model that reads one file per question (the question's length names it), then answers naming the question. */
function readingModel() {
  return new MockLanguageModelV4({
    doGenerate: async ({ prompt }: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> => {
      const question = textOf(prompt.findLast((message) => message.role === "user")!);
      const step = prompt.length;
      if (prompt.at(-1)?.role === "tool")
        return {
          content: [{ type: "text", text: `Answered: ${question}` }],
          finishReason: { unified: "stop", raw: "stop" },
          usage,
          warnings: [],
        };
      return {
        content: [
          {
            type: "tool-call",
            toolCallId: `call_${step}_${question.length}`,
            toolName: "read_file",
            input: JSON.stringify({ path: `src/${question.length}.ts` }),
          },
        ],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      };
    },
  });
}

function agentWith(model: MockLanguageModelV4, processor: CtxkitProcessor) {
  return new Agent({
    id: "reader",
    name: "Reader",
    instructions: "You read files.",
    // Mastra types models against its own copy of the provider spec; the mock is the same v4 interface.
    model: model as never,
    tools: { read_file: readFile },
    inputProcessors: [processor],
  });
}

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

describe("CtxkitProcessor", () => {
  it("governs every step of multi-step tool runs and stores the thread verbatim", async () => {
    const store = new MemorySessionStore();
    const requests: PreparedRequest[] = [];
    const engine = await engineOver(store);
    const model = readingModel();
    const agent = agentWith(
      model,
      new CtxkitProcessor({ engine, onRequest: (request) => requests.push(request) }),
    );
    for (let turn = 1; turn <= 16; turn++) {
      const question = `Question ${turn}: ${"why ".repeat(turn)}`;
      const result = await agent.generate(question, {
        maxSteps: 5,
        memory: { thread: "thread-1", resource: "user-1" },
      });
      expect(result.text).toBe(`Answered: ${question}`);
    }

    expect(model.doGenerateCalls).toHaveLength(32);
    for (const call of model.doGenerateCalls) {
      expect(promptTokens(call.prompt)).toBeLessThan(WINDOW);
      expect(call.prompt[0]).toEqual({ role: "system", content: "You read files." });
    }
    // The last call saw this turn's question, the call and the full output it asked for.
    const last = model.doGenerateCalls.at(-1)!.prompt;
    const length = `Question 16: ${"why ".repeat(16)}`.length;
    expect(textOf(last.at(-1)!)).toContain(`export const line = "src/${length}.ts";`);
    expect(requests.some((request) => request.checkpoint)).toBe(true);
    expect(requests.flatMap((request) => request.events).map((event) => event.type)).toContain(
      "tool-output-offloaded",
    );
    const stored = (await store.loadMessages("thread-1", { strategy: "all" })).filter(
      (message) => message.kind === undefined,
    );
    expect(stored.map((message) => message.role)).toEqual(
      Array.from({ length: 16 }, () => ["user", "assistant", "tool", "assistant"]).flat(),
    );
    expect(stored[1]!.content).toEqual([
      { type: "tool-call", id: "call_2_16", name: "read_file", input: { path: "src/16.ts" } },
    ]);
    expect(stored[1]!.usage).toEqual({ input: 100, output: 10 });
    expect(stored[2]!.content[0]).toMatchObject({ type: "tool-result", callId: "call_2_16" });
    expect(JSON.stringify(stored[2]!.content).length).toBeGreaterThan(8_000);
  });

  it("keeps interleaved threads apart and resumes them after a restart", async () => {
    const directory = mkdtempSync(join(tmpdir(), "ctxkit-mastra-"));
    directories.push(directory);
    const path = join(directory, "agent.db");
    const ask = (agent: Agent, thread: string, question: string) => {
      const requestContext = new RequestContext();
      requestContext.set(MASTRA_THREAD_ID_KEY, thread);
      return agent.generate(question, { maxSteps: 5, requestContext });
    };

    const first = await openSqliteSessionStore({ path });
    const before = readingModel();
    const agent = agentWith(before, new CtxkitProcessor({ engine: await engineOver(first) }));
    await ask(agent, "a", "first a");
    await ask(agent, "b", "first b");
    await first.close();

    const second = await openSqliteSessionStore({ path });
    const after = readingModel();
    const restarted = agentWith(after, new CtxkitProcessor({ engine: await engineOver(second) }));
    const result = await ask(restarted, "a", "second a");
    await second.close();

    expect(result.text).toBe("Answered: second a");
    // Without Mastra memory the agent knows only the new question: the history comes from the store.
    const seen = after.doGenerateCalls.at(-1)!.prompt;
    expect(seen.map((message) => message.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
      "assistant",
      "tool",
    ]);
    expect(textOf(seen[1]!)).toBe("first a");
    expect(textOf(seen[4]!)).toBe("Answered: first a");
    expect(JSON.stringify(seen)).not.toContain("first b");
  });

  it("keeps a streamed signature, provider-executed tool calls and results, and generated files", async () => {
    const store = new MemorySessionStore();
    const engine = await engineOver(store);
    const png = Buffer.from("89504e470d0a1a0a", "hex").toString("base64");
    const first: LanguageModelV4StreamPart[] = [
      { type: "reasoning-start", id: "r0" },
      { type: "reasoning-delta", id: "r0", delta: "Search, then read." },
      {
        type: "reasoning-delta",
        id: "r0",
        delta: "",
        providerMetadata: { anthropic: { signature: "U0lH" } },
      },
      { type: "reasoning-end", id: "r0" },
      { type: "reasoning-start", id: "r1", providerMetadata: { anthropic: { redactedData: "UkVE" } } },
      { type: "reasoning-end", id: "r1" },
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
        result: [{ type: "web_search_result", url: "https://a.test" }],
      },
      { type: "file", mediaType: "image/png", data: { type: "data", data: png } },
      { type: "tool-call", toolCallId: "c1", toolName: "read_file", input: JSON.stringify({ path: "a.ts" }) },
      { type: "finish", usage, finishReason: { unified: "tool-calls", raw: "tool_use" } },
    ];
    const answer: LanguageModelV4StreamPart[] = [
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "done" },
      { type: "text-end", id: "t" },
      { type: "finish", usage, finishReason: { unified: "stop", raw: "end_turn" } },
    ];
    const model = new MockLanguageModelV4({
      provider: "anthropic.messages",
      doStream: async ({ prompt }) => ({
        stream: convertArrayToReadableStream(prompt.at(-1)?.role === "tool" ? answer : first),
      }),
    });
    const agent = agentWith(model, new CtxkitProcessor({ engine }));
    const result = await agent.stream("Find a cat", {
      maxSteps: 3,
      memory: { thread: "cats", resource: "user-1" },
    });
    expect(await result.text).toBe("done");
    console.log(
      "DEBUG",
      JSON.stringify(
        (await store.loadMessages("cats", { strategy: "all" })).map((m) => [
          m.role,
          m.kind,
          m.content.map((b) => b.type),
        ]),
      ),
      JSON.stringify(
        model.doStreamCalls.map((c) =>
          c.prompt.map((m) => [m.role, Array.isArray(m.content) ? m.content.map((p) => p.type) : "s"]),
        ),
      ),
    );
    const stored = (await store.loadMessages("cats", { strategy: "all", media: "inline" })).filter(
      (message) => message.kind === undefined,
    );
    expect(stored.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(stored[1]!.content.map((block) => block.type)).toEqual([
      "reasoning",
      "reasoning",
      "opaque",
      "opaque",
      "image",
      "tool-call",
    ]);
    expect(stored[1]!.content[0]).toMatchObject({ text: "Search, then read.", signature: "U0lH" });
    expect(stored[1]!.content[1]).toMatchObject({ redacted: true, signature: "UkVE" });
    expect(stored[1]!.content[4]).toMatchObject({ type: "image", mediaType: "image/png", data: png });
    // The next step's governed prompt sends them back as the AI SDK would.
    const assistant = model.doStreamCalls[1]!.prompt.find((message) => message.role === "assistant");
    expect(assistant?.content.map((part) => part.type)).toEqual([
      "reasoning",
      "reasoning",
      "tool-call",
      "tool-result",
      "file",
      "tool-call",
    ]);
    expect(assistant?.content[0]).toMatchObject({ providerOptions: { anthropic: { signature: "U0lH" } } });
    expect(assistant?.content[2]).toMatchObject({ toolCallId: "ws1", providerExecuted: true });
    expect(assistant?.content[3]).toMatchObject({
      toolCallId: "ws1",
      output: { type: "json", value: [{ type: "web_search_result", url: "https://a.test" }] },
    });
  });

  it("asks for a thread when the call has none", async () => {
    const agent = agentWith(
      readingModel(),
      new CtxkitProcessor({ engine: await engineOver(new MemorySessionStore()) }),
    );
    await expect(agent.generate("hello")).rejects.toThrow(/memory: \{ thread, resource \}/);
  });
});
