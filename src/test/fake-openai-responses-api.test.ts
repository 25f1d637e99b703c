import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { startFakeOpenAIServer } from "./fake-openai-server.ts";

describe("the fake OpenAI server's Responses API, with the official openai client", () => {
  it("answers with response objects: reasoning with encrypted content, text, function calls, usage", async () => {
    await using server = await startFakeOpenAIServer({
      responses: [
        {
          reasoning: "plan",
          text: "Reading it.",
          toolCalls: [{ id: "call_a", name: "read", arguments: { path: "x" } }],
          usage: { promptTokens: 11, completionTokens: 7, cachedTokens: 4 },
        },
      ],
    });
    const client = new OpenAI({ baseURL: server.url, apiKey: "test", maxRetries: 0 });
    const answer = await client.responses.create({ model: "m", input: "go", instructions: "terse" });
    expect(answer.output.map((item) => item.type)).toEqual(["reasoning", "message", "function_call"]);
    expect(answer.output[0]).toMatchObject({
      encrypted_content: `enc:${Buffer.from("plan").toString("base64")}`,
    });
    expect(answer.output_text).toBe("Reading it.");
    expect(answer.output[2]).toMatchObject({ call_id: "call_a", name: "read", arguments: '{"path":"x"}' });
    expect(answer.usage).toMatchObject({
      input_tokens: 11,
      output_tokens: 7,
      input_tokens_details: { cached_tokens: 4 },
    });
    expect(server.requests[0]).toMatchObject({
      path: "/v1/responses",
      body: { input: "go", instructions: "terse" },
    });
  });

  it("streams the Responses events in order, which the SDK's stream helper assembles", async () => {
    await using server = await startFakeOpenAIServer({
      responses: [
        { text: "streamed text", chunkSize: 3, toolCalls: [{ name: "ls", arguments: { all: true } }] },
      ],
    });
    const client = new OpenAI({ baseURL: server.url, apiKey: "test", maxRetries: 0 });
    const stream = client.responses.stream({ model: "m", input: "go" });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const final = await stream.finalResponse();
    expect(types.slice(0, 2)).toEqual(["response.created", "response.in_progress"]);
    expect(types.filter((type) => type === "response.output_text.delta")).toHaveLength(5);
    expect(types).toContain("response.function_call_arguments.delta");
    expect(types.at(-1)).toBe("response.completed");
    expect(final.output_text).toBe("streamed text");
    expect(final.output[1]).toMatchObject({
      type: "function_call",
      call_id: "call_0_0",
      arguments: '{"all":true}',
    });
  });
});
