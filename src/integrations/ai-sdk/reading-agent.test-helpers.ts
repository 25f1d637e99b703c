// Shared by the session-core adapter tests: a small window, an engine over a store, and a model that reads one
// file per question through a real AI SDK tool, then answers naming the question.
import type {
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4Prompt,
} from "@ai-sdk/provider";
import { tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";
import type { ContextEngine } from "../../engine/context-engine.ts";
import type { SessionStore } from "../../store/session-store.ts";
import { testEngine } from "../shared/test-engine.test-helpers.ts";

export const WINDOW = 12_000;
export const usage = {
  inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 10, text: 10, reasoning: 0 },
};

export const readFile = tool({
  description: "Reads a file",
  inputSchema: z.object({ path: z.string() }),
  execute: async ({ path }) => `// ${path}\n${`export const line = "${path}";\n`.repeat(200)}`,
});

export const engineOver = (store: SessionStore): Promise<ContextEngine> => testEngine(store, WINDOW);

export function textOf(message: LanguageModelV4Prompt[number]): string {
  if (typeof message.content === "string") return message.content;
  return message.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}

/** Reads one file per question (named by the question's length), then answers naming the question. */
export function readingModel() {
  return new MockLanguageModelV4({
    doGenerate: async ({ prompt }: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> => {
      const question = textOf(prompt.findLast((message) => message.role === "user")!);
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
            toolCallId: `call_${question.length}`,
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
