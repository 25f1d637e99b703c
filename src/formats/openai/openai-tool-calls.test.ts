import fc from "fast-check";
import type { ChatCompletion, ChatCompletionTool } from "openai/resources/chat/completions";
import { describe, expect, it } from "vitest";
import type { ContentBlock, JsonValue, Message, ToolCallBlock } from "../../model/message.ts";
import { toOpenAIChat } from "../providers/openai-chat/index.ts";
import { fromOpenAIChatCompletion, fromOpenAIToolCalls, fromOpenAITools, toOpenAITools } from "./index.ts";

// As a value travels in JSON (fast-check's -0 comes back as 0 from any JSON text).
const json: fc.Arbitrary<JsonValue> = fc
  .jsonValue()
  .map((value) => JSON.parse(JSON.stringify(value)) as JsonValue);
const objectInput = fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), json, { maxKeys: 4 });
const call: fc.Arbitrary<ToolCallBlock> = fc.record({
  type: fc.constant("tool-call" as const),
  id: fc.stringMatching(/^call_[a-z0-9]{1,12}$/),
  name: fc.stringMatching(/^[a-z_]{1,16}$/),
  input: objectInput,
});
const replyContent = fc
  .tuple(
    fc.option(fc.string({ minLength: 1, maxLength: 40 }), { nil: undefined }),
    fc.uniqueArray(call, { selector: (c) => c.id, maxLength: 4 }),
  )
  .filter(([text, calls]) => text !== undefined || calls.length > 0)
  .map(([text, calls]): ContentBlock[] => [
    ...(text === undefined ? [] : [{ type: "text" as const, text }]),
    ...calls,
  ]);

function assistant(content: ContentBlock[]): Message {
  return {
    id: "m1",
    sessionId: "s",
    seq: 0,
    turn: 1,
    role: "assistant",
    content,
    createdAt: "2026-01-01T00:00:00.000Z",
  };
}

describe("OpenAI tool calls", () => {
  it("round-trips: ctxkit blocks → the assistant message OpenAI sends back → the same blocks", () => {
    fc.assert(
      fc.property(replyContent, (content) => {
        const [message] = toOpenAIChat([assistant(content)]);
        expect(fromOpenAIToolCalls(message)).toEqual(content);
      }),
    );
  });

  it("reads a real Chat Completions response: tool calls with parsed arguments, usage with cached tokens", () => {
    const completion: ChatCompletion = {
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1,
      model: "gpt-4.1-2025-04-14",
      choices: [
        {
          index: 0,
          finish_reason: "tool_calls",
          logprobs: null,
          message: {
            role: "assistant",
            content: null,
            refusal: null,
            tool_calls: [
              {
                id: "call_a",
                type: "function",
                function: { name: "read_file", arguments: '{"path": "src/a.ts"}' },
              },
              { id: "call_b", type: "function", function: { name: "grep", arguments: '{"pattern":' } },
            ],
          },
        },
      ],
      usage: {
        prompt_tokens: 1200,
        completion_tokens: 30,
        total_tokens: 1230,
        prompt_tokens_details: { cached_tokens: 1024 },
      },
    };
    expect(fromOpenAIChatCompletion(completion)).toEqual({
      content: [
        { type: "tool-call", id: "call_a", name: "read_file", input: { path: "src/a.ts" } },
        // Cut-off arguments stay as their text, marked so they go back as the function call they were.
        { type: "tool-call", id: "call_b", name: "grep", input: '{"pattern":', unparsed: true },
      ],
      usage: { input: 1200, output: 30, cacheRead: 1024 },
      model: "gpt-4.1-2025-04-14",
      finishReason: "tool_calls",
    });
  });

  it("toOpenAITools gives what the OpenAI client takes, and fromOpenAITools gives the definitions back", () => {
    const tools = [
      {
        name: "read_file",
        description: "Read a file",
        inputSchema: { type: "object", properties: { path: { type: "string" } } },
      },
      { name: "now" },
    ];
    const openAITools: ChatCompletionTool[] = toOpenAITools(tools);
    expect(openAITools[1]).toEqual({
      type: "function",
      function: { name: "now", parameters: { type: "object", properties: {} } },
    });
    expect(fromOpenAITools(toOpenAITools(tools))).toEqual([
      tools[0],
      { name: "now", inputSchema: { type: "object", properties: {} } },
    ]);
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            name: fc.string({ minLength: 1 }),
            description: fc.string(),
            inputSchema: objectInput,
          }),
          { maxLength: 5 },
        ),
        (definitions) => {
          expect(fromOpenAITools(toOpenAITools(definitions))).toEqual(definitions);
        },
      ),
    );
  });
});
