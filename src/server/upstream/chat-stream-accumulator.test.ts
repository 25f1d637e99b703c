import { describe, expect, it } from "vitest";
import { toOpenAIChat } from "../../formats/providers/openai-chat/index.ts";
import { replyFromCompletion } from "./assistant-reply.ts";
import { ChatStreamAccumulator } from "./chat-stream-accumulator.ts";

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: "c",
  object: "chat.completion.chunk",
  model: "m-1",
  choices: [{ index: 0, delta, finish_reason: finish }],
});

describe("ChatStreamAccumulator", () => {
  it("rebuilds reasoning, text and tool calls assembled by index, with usage and finish reason", () => {
    const accumulator = new ChatStreamAccumulator();
    accumulator.add(chunk({ role: "assistant", reasoning_content: "think " }));
    accumulator.add(chunk({ reasoning_content: "hard" }));
    accumulator.add(chunk({ content: "Reading " }));
    accumulator.add(chunk({ content: "two files." }));
    accumulator.add(
      chunk({
        tool_calls: [
          { index: 0, id: "call_a", type: "function", function: { name: "read", arguments: '{"pa' } },
        ],
      }),
    );
    accumulator.add(
      chunk({
        tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "read", arguments: "" } }],
      }),
    );
    accumulator.add(chunk({ tool_calls: [{ index: 0, function: { arguments: 'th":"a.ts"}' } }] }));
    accumulator.add(chunk({ tool_calls: [{ index: 1, function: { arguments: '{"path":"b.ts"}' } }] }));
    accumulator.add(chunk({}, "tool_calls"));
    const usage = accumulator.add({
      choices: [],
      usage: { prompt_tokens: 100, completion_tokens: 20, prompt_tokens_details: { cached_tokens: 64 } },
    });
    expect(usage.usageOnly).toBe(true);
    expect(accumulator.reply()).toEqual({
      content: [
        { type: "reasoning", text: "think hard" },
        { type: "text", text: "Reading two files." },
        { type: "tool-call", id: "call_a", name: "read", input: { path: "a.ts" } },
        { type: "tool-call", id: "call_b", name: "read", input: { path: "b.ts" } },
      ],
      usage: { input: 100, output: 20, cacheRead: 64 },
      finishReason: "tool_calls",
      model: "m-1",
    });
  });

  it("keeps broken tool arguments as text and reports an error chunk", () => {
    const accumulator = new ChatStreamAccumulator();
    accumulator.add(
      chunk({ tool_calls: [{ index: 0, id: "c1", function: { name: "run", arguments: '{"cmd": ' } }] }),
    );
    const failed = accumulator.add({ error: { message: "upstream exploded" } });
    expect(failed.error).toEqual({ message: "upstream exploded" });
    const content = accumulator.reply().content;
    expect(content).toEqual([
      { type: "tool-call", id: "c1", name: "run", input: '{"cmd": ', unparsed: true },
    ]);
    // Stored, it goes upstream again as the function call it was (a custom tool's call would be refused).
    const [sent] = toOpenAIChat([
      { id: "m", sessionId: "s", seq: 0, turn: 1, role: "assistant", content, createdAt: "t" },
    ]);
    expect(sent).toMatchObject({
      tool_calls: [{ type: "function", function: { name: "run", arguments: '{"cmd": ' } }],
    });
  });
});

describe("replyFromCompletion", () => {
  it("reads choice 0 of a JSON completion", () => {
    const reply = replyFromCompletion({
      model: "m-2",
      choices: [
        {
          index: 0,
          finish_reason: "stop",
          message: {
            role: "assistant",
            content: "Done.",
            tool_calls: [{ id: "x", type: "function", function: { name: "ls", arguments: "{}" } }],
          },
        },
      ],
      usage: { prompt_tokens: 7, completion_tokens: 2, completion_tokens_details: { reasoning_tokens: 1 } },
    });
    expect(reply).toEqual({
      content: [
        { type: "text", text: "Done." },
        { type: "tool-call", id: "x", name: "ls", input: {} },
      ],
      usage: { input: 7, output: 2, reasoning: 1 },
      finishReason: "stop",
      model: "m-2",
    });
  });

  it("keeps a refusal as a refusal, which goes back to OpenAI as one", () => {
    const reply = replyFromCompletion({
      choices: [{ index: 0, message: { role: "assistant", content: null, refusal: "I can't help." } }],
    });
    expect(reply.content).toEqual([{ type: "text", text: "I can't help.", refusal: true }]);
    const streamed = new ChatStreamAccumulator();
    for (const delta of [{ role: "assistant", refusal: "" }, { refusal: "I can't " }, { refusal: "help." }])
      streamed.add(chunk(delta));
    expect(streamed.reply().content).toEqual(reply.content);
    expect(
      toOpenAIChat([
        {
          id: "m",
          sessionId: "s",
          seq: 0,
          turn: 1,
          role: "assistant",
          content: reply.content,
          createdAt: "2026-01-01T00:00:00.000Z",
        },
      ]),
    ).toEqual([{ role: "assistant", content: null, refusal: "I can't help." }]);
  });

  it("gives an empty text block for an empty answer", () => {
    expect(replyFromCompletion({ choices: [] }).content).toEqual([{ type: "text", text: "" }]);
  });
});
