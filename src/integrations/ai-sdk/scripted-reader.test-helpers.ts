// Shared by the raw AI SDK adapter tests (`ctxkitMiddleware`, `ctxkitPrepareStep`): a model that reads one file per
// step, then answers, and the tool it calls, whose outputs are large enough for governance to act on.
import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from "@ai-sdk/provider";
import { tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";

/** A step's usage as the provider reports it: `input` tokens in, 10 out. */
export const usage = (input: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 10, text: 10, reasoning: 0 },
});

/** `read_file`, whose every output is ~2.4k tokens. */
export const tools = {
  read_file: tool({
    description: "read a file",
    inputSchema: z.object({ path: z.string() }),
    execute: async ({ path }) => `// ${path}\n${"const value = 1;\n".repeat(600)}`,
  }),
};

/** The `call`-th call of `read_file` (`src/file<call>.ts`), as a model's content part or stream part. */
export const readFileCall = (call: number) => ({
  type: "tool-call" as const,
  toolCallId: `call_${call}`,
  toolName: "read_file",
  input: JSON.stringify({ path: `src/file${call}.ts` }),
});

/** Calls `read_file` `steps` times (`src/file<n>.ts`), then answers "all files read"; reports `reported(call)` input tokens. */
export function scriptedReader(steps: number, reported: (options: LanguageModelV4CallOptions) => number) {
  let call = 0;
  return new MockLanguageModelV4({
    doGenerate: async (options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> => {
      call++;
      const done = call > steps;
      return {
        content: done ? [{ type: "text", text: "all files read" }] : [readFileCall(call)],
        finishReason: done ? { unified: "stop", raw: "stop" } : { unified: "tool-calls", raw: "tool_calls" },
        usage: usage(reported(options)),
        warnings: [],
      };
    },
  });
}
