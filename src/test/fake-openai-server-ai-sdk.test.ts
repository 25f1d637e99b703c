import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { jsonSchema, streamText, tool } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeOpenAIServer, startFakeOpenAIServer } from "./fake-openai-server.ts";

const servers: FakeOpenAIServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe("startFakeOpenAIServer with the AI SDK's streaming client", () => {
  it("streams text, reasoning, tool calls and usage that streamText reassembles", async () => {
    const server = await startFakeOpenAIServer({
      responses: [
        {
          reasoning: "The user wants the file.",
          text: "Reading it now.",
          toolCalls: [{ id: "call_read", name: "read_file", arguments: { path: "src/index.ts" } }],
          usage: { promptTokens: 120, completionTokens: 30, cachedTokens: 100 },
          chunkSize: 3,
        },
      ],
    });
    servers.push(server);
    const provider = createOpenAICompatible({
      name: "fake",
      baseURL: server.url,
      apiKey: "k",
      includeUsage: true,
    });
    const result = streamText({
      model: provider.chatModel("m"),
      prompt: "Show me src/index.ts",
      maxRetries: 0,
      tools: {
        read_file: tool({
          description: "Read a file",
          inputSchema: jsonSchema<{ path: string }>({
            type: "object",
            properties: { path: { type: "string" } },
            required: ["path"],
          }),
        }),
      },
    });
    expect(await result.text).toBe("Reading it now.");
    expect(await result.reasoningText).toBe("The user wants the file.");
    const calls = await result.toolCalls;
    expect(calls.map((call) => [call.toolCallId, call.toolName, call.input])).toEqual([
      ["call_read", "read_file", { path: "src/index.ts" }],
    ]);
    const usage = await result.totalUsage;
    expect(usage.inputTokens).toBe(120);
    expect(usage.outputTokens).toBe(30);
    expect(usage.inputTokenDetails?.cacheReadTokens).toBe(100);
    expect(server.requests[0]?.body.stream).toBe(true);
    expect(server.requests[0]?.body.stream_options).toEqual({ include_usage: true });
    expect(server.requests[0]?.body.tools).toHaveLength(1);
  });
});
