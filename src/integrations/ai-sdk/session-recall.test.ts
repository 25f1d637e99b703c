import type {
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
} from "@ai-sdk/provider";
import { generateText, stepCountIs, streamText, wrapLanguageModel, type ModelMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { MemorySessionStore } from "../../store/memory/index.ts";
import { ctxkitSessionMiddleware } from "./session-middleware.ts";
import { engineOver, readFile, readingModel, textOf, usage } from "./reading-agent.test-helpers.ts";

const NOTICE = /recall_tool_output\(\\?"([^"\\]+)/;

/** A generated result as the parts a provider streams it in. */
function streamed(result: LanguageModelV4GenerateResult): ReadableStream<LanguageModelV4StreamPart> {
  const parts: LanguageModelV4StreamPart[] = [{ type: "stream-start", warnings: [] }];
  for (const [index, part] of result.content.entries()) {
    if (part.type === "text") {
      const id = `t${index}`;
      parts.push(
        { type: "text-start", id },
        { type: "text-delta", id, delta: part.text },
        { type: "text-end", id },
      );
    } else if (part.type === "tool-call") parts.push(part);
  }
  parts.push({ type: "finish", finishReason: result.finishReason, usage: result.usage });
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}

describe.each([
  { name: "generateText", streaming: false },
  { name: "streamText (wrapStream)", streaming: true },
])("ctxkitSessionMiddleware and recall_tool_output: $name", ({ streaming }) => {
  it("offers the tool its offload notices name, answers the model's call itself, and sends the reply that follows", async () => {
    const store = new MemorySessionStore();
    const engine = await engineOver(store);
    const reading = readingModel();
    const calls: LanguageModelV4CallOptions[] = [];
    let recalled: string | undefined;
    const script = async (options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> => {
      calls.push(options);
      const last = options.prompt.at(-1)!;
      // Once a notice names a reference, the model asks for that output back, then says what it read.
      if (
        last.role === "tool" &&
        last.content.some((part) => part.type === "tool-result" && part.toolName === "recall_tool_output")
      ) {
        recalled = textOf({ role: "user", content: JSON.stringify(last.content) } as never);
        return {
          content: [{ type: "text", text: "Recalled." }],
          finishReason: { unified: "stop", raw: "stop" },
          usage,
          warnings: [],
        };
      }
      const ref = options.prompt
        .map((message) => JSON.stringify(message.content))
        .join()
        .match(NOTICE)?.[1];
      if (ref !== undefined && last.role === "user" && textOf(last).startsWith("Recall"))
        return {
          content: [
            {
              type: "tool-call",
              toolCallId: "recall_1",
              toolName: "recall_tool_output",
              input: JSON.stringify({ ref }),
            },
          ],
          finishReason: { unified: "tool-calls", raw: "tool_calls" },
          usage,
          warnings: [],
        };
      return reading.doGenerate(options);
    };
    const model = new MockLanguageModelV4({
      doGenerate: script,
      doStream: async (options) => ({ stream: streamed(await script(options)) }),
    });
    const wrapped = wrapLanguageModel({ model, middleware: ctxkitSessionMiddleware({ engine }) });
    const messages: ModelMessage[] = [];
    const ask = async (question: string) => {
      messages.push({ role: "user", content: question });
      const options = {
        model: wrapped,
        tools: { read_file: readFile },
        messages,
        stopWhen: stepCountIs(4),
        providerOptions: { ctxkit: { sessionId: "chat" } },
      };
      if (!streaming) {
        const result = await generateText(options);
        messages.push(...result.response.messages);
        return result.text;
      }
      const result = streamText({ ...options, onError: () => {} });
      const text = await result.text;
      messages.push(...(await result.response).messages);
      return text;
    };
    for (let turn = 0; turn < 8; turn++) await ask(`Question ${turn}: ${"why ".repeat(turn)}`);
    const noticed = calls.some((call) => NOTICE.test(JSON.stringify(call.prompt)));
    expect(noticed).toBe(true);
    // Every call whose prompt names the tool offers it.
    for (const call of calls)
      if (NOTICE.test(JSON.stringify(call.prompt)))
        expect(call.tools?.map((tool) => tool.name)).toContain("recall_tool_output");
    expect(await ask("Recall the first file.")).toBe("Recalled.");
    // The session answered: the model got the offloaded output back, whole lines of a file it read.
    expect(recalled).toContain('export const line = \\"src/');
    const stored = await store.loadMessages("chat", { strategy: "all" });
    const tail = stored.slice(-4).map((message) => message.role);
    expect(tail).toEqual(["user", "assistant", "tool", "assistant"]);
  });
});
