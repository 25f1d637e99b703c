// A provider-executed (server) tool — Anthropic's web search — next to a tool the agent runs, through every AI SDK
// integration: the call and its result stay in the history, at their place, and go back to the model.
import { anthropic } from "@ai-sdk/anthropic";
import type { LanguageModelV4GenerateResult } from "@ai-sdk/provider";
import { generateText, stepCountIs, wrapLanguageModel, type StepResult, type ToolSet } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { MemorySessionStore } from "../../store/memory/index.ts";
import { FakeSummarizer } from "../../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../../test/fake-token-counter.ts";
import { ctxkitMiddleware } from "./middleware.ts";
import { ctxkitPrepareStep } from "./prepare-step.ts";
import { engineOver, readFile, usage } from "./reading-agent.test-helpers.ts";
import { ctxkitSessionMiddleware } from "./session-middleware.ts";
import { ctxkitSessionSteps } from "./session-steps.ts";

const searchResult = [
  { type: "web_search_result", url: "https://a.test", title: "A", encryptedContent: "RQ==", pageAge: null },
];

/** Searches the web (run by the provider) and asks to read a file in one step, then answers. */
function searchingModel() {
  return new MockLanguageModelV4({
    provider: "anthropic.messages",
    modelId: "claude-sonnet-4-5",
    doGenerate: async ({ prompt }): Promise<LanguageModelV4GenerateResult> => {
      if (prompt.at(-1)?.role === "tool")
        return {
          content: [{ type: "text", text: "done" }],
          finishReason: { unified: "stop", raw: "end_turn" },
          usage,
          warnings: [],
        };
      return {
        content: [
          {
            type: "tool-call",
            toolCallId: "ws1",
            toolName: "web_search",
            input: JSON.stringify({ query: "ctxkit" }),
            providerExecuted: true,
          },
          { type: "tool-result", toolCallId: "ws1", toolName: "web_search", result: searchResult },
          { type: "text", text: "Found it; reading." },
          {
            type: "tool-call",
            toolCallId: "c1",
            toolName: "read_file",
            input: JSON.stringify({ path: "a.ts" }),
          },
        ],
        finishReason: { unified: "tool-calls", raw: "tool_use" },
        usage,
        warnings: [],
      };
    },
  });
}

const tools: ToolSet = {
  read_file: readFile,
  web_search: anthropic.tools.webSearch_20250305({ maxUses: 1 }),
};

/** The second request's assistant message, as part types. */
function secondAssistant(model: MockLanguageModelV4): string[] {
  const prompt = model.doGenerateCalls[1]!.prompt;
  const assistant = prompt.find((message) => message.role === "assistant");
  return assistant?.role === "assistant" ? assistant.content.map((part) => part.type) : [];
}

const expected = ["tool-call", "tool-result", "text", "tool-call"];

describe("provider-executed tools in the AI SDK integrations", () => {
  it("ctxkitPrepareStep keeps the search call and result", async () => {
    const model = searchingModel();
    const result = await generateText({
      model,
      tools,
      prompt: "search and read",
      stopWhen: stepCountIs(4),
      prepareStep: ctxkitPrepareStep({
        contextWindow: 100_000,
        counter: new FakeTokenCounter(),
        summarizer: new FakeSummarizer(),
        tools,
      }),
    });
    expect(result.text).toBe("done");
    expect(secondAssistant(model)).toEqual(expected);
  });

  it("ctxkitMiddleware keeps the search call and result", async () => {
    const model = searchingModel();
    const middleware = ctxkitMiddleware({
      contextWindow: 100_000,
      counter: new FakeTokenCounter(),
      summarizer: new FakeSummarizer(),
    });
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware }),
      tools,
      prompt: "search and read",
      stopWhen: stepCountIs(4),
    });
    expect(result.text).toBe("done");
    expect(secondAssistant(model)).toEqual(expected);
  });

  it("ctxkitSessionSteps and ctxkitSessionMiddleware store the search call and result, and send them back", async () => {
    for (const adapter of ["steps", "middleware"] as const) {
      const model = searchingModel();
      const store = new MemorySessionStore();
      const engine = await engineOver(store);
      const failures: unknown[] = [];
      const steps = ctxkitSessionSteps({ engine, sessionId: "s", tools });
      const result = await generateText({
        model:
          adapter === "steps"
            ? model
            : wrapLanguageModel({
                model,
                middleware: ctxkitSessionMiddleware({ engine, defaultSessionId: "s" }),
              }),
        tools,
        prompt: "search and read",
        stopWhen: stepCountIs(4),
        ...(adapter === "steps" && {
          prepareStep: (options: Parameters<typeof steps.prepareStep>[0]) => steps.prepareStep(options),
          // ai v7 swallows a throwing onStepFinish: record what it threw.
          onStepFinish: async (step: StepResult<ToolSet>) => {
            try {
              await steps.onStepFinish(step);
            } catch (error) {
              failures.push(error);
              throw error;
            }
          },
        }),
      });
      expect(failures).toEqual([]);
      expect(result.text).toBe("done");
      expect(secondAssistant(model)).toEqual(expected);
      const stored = await store.loadMessages("s", { strategy: "all" });
      expect(stored.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"]);
      expect(stored[1]!.content.map((block) => block.type)).toEqual([
        "opaque",
        "opaque",
        "text",
        "tool-call",
      ]);
      expect(stored[1]!.content[1]).toMatchObject({
        type: "opaque",
        provider: "ai-sdk",
        data: { type: "tool-result", toolCallId: "ws1", output: { type: "json", value: searchResult } },
      });
    }
  });
});
