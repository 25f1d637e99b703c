import type {
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4Prompt,
} from "@ai-sdk/provider";
import { generateText, stepCountIs, tool, wrapLanguageModel, type ModelMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { FakeSummarizer } from "../../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../../test/fake-token-counter.ts";
import { ctxkitMiddleware } from "./middleware.ts";
import { ctxkitPrepareStep } from "./prepare-step.ts";

const usage = {
  inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 10, text: 10, reasoning: 0 },
};

/** A model of `provider` that calls `read_file` `steps` times, then answers. */
function scriptedModel(provider: string, modelId: string, steps: number) {
  let call = 0;
  return new MockLanguageModelV4({
    provider,
    modelId,
    doGenerate: async (): Promise<LanguageModelV4GenerateResult> => {
      call++;
      const done = call > steps;
      return {
        content: done
          ? [{ type: "text", text: "all files read" }]
          : [
              {
                type: "tool-call",
                toolCallId: `call_${call}`,
                toolName: "read_file",
                input: JSON.stringify({ path: `src/file${call}.ts` }),
              },
            ],
        finishReason: done ? { unified: "stop", raw: "stop" } : { unified: "tool-calls", raw: "tool_calls" },
        usage,
        warnings: [],
      };
    },
  });
}

const readFile = tool({
  description: "read a file",
  inputSchema: z.object({ path: z.string() }),
  execute: async ({ path }) => `// ${path}\n${"const value = 1;\n".repeat(300)}`,
});

const instructions = "You are a careful coding agent. Read before you edit. ".repeat(100);

const governor = (contextWindow = 200_000) => ({
  contextWindow,
  reservedOutputTokens: 2_000,
  counter: new FakeTokenCounter(),
  summarizer: new FakeSummarizer(),
});

type Marked = { providerOptions?: Record<string, Record<string, unknown> | undefined> | undefined };
const controlOf = (item: Marked) => item.providerOptions?.["anthropic"]?.["cacheControl"];

/** Indexes of the prompt's messages that carry a message-level breakpoint. */
function markedMessages(prompt: LanguageModelV4Prompt): number[] {
  return prompt.flatMap((message, index) => (controlOf(message) === undefined ? [] : [index]));
}

/** Every breakpoint of a provider call: tools, messages, parts and tool outputs. */
function breakpointCount(call: LanguageModelV4CallOptions): number {
  let count = (call.tools ?? []).filter((item) => controlOf(item as Marked) !== undefined).length;
  for (const message of call.prompt) {
    if (controlOf(message) !== undefined) count++;
    if (typeof message.content === "string") continue;
    for (const part of message.content) {
      if (controlOf(part) !== undefined) count++;
      if (part.type === "tool-result" && "providerOptions" in part.output && controlOf(part.output)) count++;
    }
  }
  return count;
}

describe("prompt caching through ctxkitPrepareStep", () => {
  it("puts Anthropic breakpoints on the system prompt, the previous step's newest message and the newest one", async () => {
    const model = scriptedModel("anthropic.messages", "claude-sonnet-4-5", 3);
    const prepareStep = ctxkitPrepareStep({ ...governor(), tools: { read_file: readFile } });
    const prompt: ModelMessage[] = [{ role: "user", content: "Read every file in src/" }];
    const result = await generateText({
      model,
      instructions,
      tools: { read_file: readFile },
      messages: prompt,
      prepareStep,
      stopWhen: stepCountIs(10),
    });
    expect(result.text).toBe("all files read");
    const calls = model.doGenerateCalls;
    expect(calls).toHaveLength(4);
    // Prompt: 0 system, 1 user, then (assistant call, tool result) per step.
    expect(markedMessages(calls[0]!.prompt)).toEqual([0, 1]);
    expect(markedMessages(calls[1]!.prompt)).toEqual([0, 1, 3]);
    expect(markedMessages(calls[2]!.prompt)).toEqual([0, 3, 5]);
    expect(markedMessages(calls[3]!.prompt)).toEqual([0, 5, 7]);
    for (const call of calls) expect(breakpointCount(call)).toBeLessThanOrEqual(4);
    expect(controlOf(calls[3]!.prompt[5]!)).toEqual({ type: "ephemeral" });
    // The caller's messages and the SDK's response messages carry none (markers go on copies).
    expect(prompt[0]).toEqual({ role: "user", content: "Read every file in src/" });
    expect(JSON.stringify(result.response.messages)).not.toContain("cacheControl");
  });

  it("keeps a long governed loop within four breakpoints at every step, with a 1-hour TTL when asked", async () => {
    const model = scriptedModel("anthropic.messages", "claude-sonnet-4-5", 25);
    const prepareStep = ctxkitPrepareStep({
      ...governor(24_000),
      tools: { read_file: readFile },
      cacheTtl: "1h",
    });
    await generateText({
      model,
      instructions,
      tools: { read_file: readFile },
      prompt: "Read every file in src/",
      prepareStep,
      stopWhen: stepCountIs(40),
    });
    const calls = model.doGenerateCalls;
    expect(calls.length).toBe(26);
    for (const call of calls) {
      expect(breakpointCount(call)).toBeLessThanOrEqual(3); // no tools breakpoint from prepareStep
      const marked = markedMessages(call.prompt);
      expect(marked[0]).toBe(0);
      // The newest message, or the one before the budget-exit notice (sent with this request only).
      const notice = JSON.stringify(call.prompt.at(-1)).includes("[Context budget notice]");
      expect(marked.at(-1)).toBe(call.prompt.length - (notice ? 2 : 1));
      for (const index of marked)
        expect(controlOf(call.prompt[index]!)).toEqual({ type: "ephemeral", ttl: "1h" });
    }
  });

  it("sets no breakpoint for other providers, and OpenAI's promptCacheKey when a session id is given", async () => {
    const openai = scriptedModel("openai.responses", "gpt-4.1", 1);
    await generateText({
      model: openai,
      instructions,
      tools: { read_file: readFile },
      prompt: "Read src/",
      prepareStep: ctxkitPrepareStep({ ...governor(), sessionId: "chat-42", tools: { read_file: readFile } }),
      stopWhen: stepCountIs(5),
    });
    expect(
      openai.doGenerateCalls.map((call) => call.providerOptions?.["openai"]?.["promptCacheKey"]),
    ).toEqual(["chat-42", "chat-42"]);
    for (const call of openai.doGenerateCalls) expect(markedMessages(call.prompt)).toEqual([]);

    const anonymous = scriptedModel("openai.responses", "gpt-4.1", 0);
    await generateText({ model: anonymous, prompt: "Hi", prepareStep: ctxkitPrepareStep(governor()) });
    expect(anonymous.doGenerateCalls[0]!.providerOptions?.["openai"]).toBeUndefined();
  });
});

describe("prompt caching through ctxkitMiddleware", () => {
  it("marks the last tool, the system prompt and the sliding messages, keeping the caller's within four", async () => {
    const base = scriptedModel("anthropic.messages", "claude-sonnet-4-5", 2);
    const middleware = ctxkitMiddleware(governor());
    const pinned = tool({
      description: "list files",
      inputSchema: z.object({}),
      execute: async () => "a.ts",
      providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } },
    });
    await generateText({
      model: wrapLanguageModel({ model: base, middleware }),
      instructions,
      tools: { list: pinned, read_file: readFile },
      messages: [
        {
          role: "user",
          content: "Here is the style guide. ".repeat(400),
          providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } },
        },
        { role: "user", content: "Read every file in src/" },
      ],
      stopWhen: stepCountIs(10),
    });
    const calls = base.doGenerateCalls;
    expect(calls).toHaveLength(3);
    for (const call of calls) {
      expect(breakpointCount(call)).toBe(4);
      // The caller's markers: the first tool and the first user message.
      expect(controlOf(call.tools![0] as Marked)).toEqual({ type: "ephemeral" });
      expect(controlOf(call.prompt[1]!)).toEqual({ type: "ephemeral" });
      expect(controlOf(call.prompt.at(-1)!)).toEqual({ type: "ephemeral" });
    }
    // Two free slots: the newest message first, then the previous step's newest (from step 2 on).
    expect(markedMessages(calls[0]!.prompt)).toEqual([0, 1, 2]);
    expect(markedMessages(calls[2]!.prompt)).toEqual([1, 4, 6]);
    expect(controlOf(calls[2]!.tools![1] as Marked)).toBeUndefined();
  });

  it("marks the last tool definition once the tools reach the model's minimum", async () => {
    const base = scriptedModel("anthropic.messages", "claude-sonnet-4-5", 0);
    const documented = tool({
      description: "Reads a file. ".repeat(400),
      inputSchema: z.object({ path: z.string() }),
      execute: async () => "",
    });
    await generateText({
      model: wrapLanguageModel({ model: base, middleware: ctxkitMiddleware(governor()) }),
      tools: { list: readFile, read_file: documented },
      prompt: "Hi",
    });
    const call = base.doGenerateCalls[0]!;
    // The session's recall tool is offered after the caller's: the breakpoint is on the last tool sent.
    expect(call.tools!.map((definition) => definition.name)).toEqual([
      "list",
      "read_file",
      "recall_tool_output",
    ]);
    expect(call.tools!.map((definition) => controlOf(definition as Marked))).toEqual([
      undefined,
      undefined,
      { type: "ephemeral" },
    ]);
    expect(markedMessages(call.prompt)).toEqual([0]);
  });

  it("stays within four breakpoints through a governed loop that rewrites history", async () => {
    const base = scriptedModel("anthropic.messages", "claude-sonnet-4-5", 25);
    let checkpoints = 0;
    const middleware = ctxkitMiddleware({
      ...governor(24_000),
      onRequest: (request) => (checkpoints += request.checkpoint ? 1 : 0),
    });
    await generateText({
      model: wrapLanguageModel({ model: base, middleware }),
      instructions,
      tools: { read_file: readFile },
      prompt: "Read every file in src/",
      stopWhen: stepCountIs(40),
    });
    expect(base.doGenerateCalls).toHaveLength(26);
    expect(checkpoints).toBeGreaterThan(0);
    for (const [index, call] of base.doGenerateCalls.entries()) {
      expect(breakpointCount(call)).toBe(index === 0 ? 2 : 3);
      // The one tool definition alone is far below Sonnet's 1,024 tokens: no breakpoint there.
      expect(controlOf(call.tools![0] as Marked)).toBeUndefined();
      expect(markedMessages(call.prompt)[0]).toBe(0);
    }
  });

  it("sets OpenAI's promptCacheKey to the session id unless the call set its own", async () => {
    const base = scriptedModel("openai.chat", "gpt-4.1", 0);
    const model = wrapLanguageModel({
      model: base,
      middleware: ctxkitMiddleware({ ...governor(), sessionId: "s-1" }),
    });
    await generateText({ model, prompt: "Hi" });
    await generateText({ model, prompt: "Hi", providerOptions: { openai: { promptCacheKey: "mine" } } });
    expect(base.doGenerateCalls.map((call) => call.providerOptions?.["openai"]?.["promptCacheKey"])).toEqual([
      "s-1",
      "mine",
    ]);
  });
});
