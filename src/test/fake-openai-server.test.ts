import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { contextLengthExceeded, invalidApiKey, rateLimited, serverError } from "./fake-openai-responses.ts";
import { type FakeOpenAIServer, startFakeOpenAIServer } from "./fake-openai-server.ts";

const servers: FakeOpenAIServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function start(options: Parameters<typeof startFakeOpenAIServer>[0]) {
  const server = await startFakeOpenAIServer(options);
  servers.push(server);
  const client = new OpenAI({ baseURL: server.url, apiKey: "sk-test", maxRetries: 0 });
  return { server, client };
}

const hello = [{ role: "user" as const, content: "Say hello" }];

describe("startFakeOpenAIServer with the official openai client", () => {
  it("answers a non-streaming request with text and usage and records the request", async () => {
    const { server, client } = await start({
      responses: [{ text: "Hello there", usage: { promptTokens: 11, completionTokens: 2, cachedTokens: 4 } }],
    });
    const completion = await client.chat.completions.create({ model: "gpt-test", messages: hello });
    expect(completion.choices[0]?.message.content).toBe("Hello there");
    expect(completion.choices[0]?.finish_reason).toBe("stop");
    expect(completion.model).toBe("gpt-test");
    expect(completion.usage).toMatchObject({
      prompt_tokens: 11,
      completion_tokens: 2,
      total_tokens: 13,
      prompt_tokens_details: { cached_tokens: 4 },
    });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.path).toBe("/v1/chat/completions");
    expect(server.requests[0]?.headers.authorization).toBe("Bearer sk-test");
    expect(server.requests[0]?.body.messages).toEqual(hello);
  });

  it("answers with tool calls, serialising JSON arguments", async () => {
    const { client } = await start({
      responses: [{ toolCalls: [{ id: "call_a", name: "read_file", arguments: { path: "src/a.ts" } }] }],
    });
    const completion = await client.chat.completions.create({
      model: "gpt-test",
      messages: hello,
      tools: [{ type: "function", function: { name: "read_file", parameters: { type: "object" } } }],
    });
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.tool_calls).toEqual([
      { id: "call_a", type: "function", function: { name: "read_file", arguments: '{"path":"src/a.ts"}' } },
    ]);
  });

  it("streams text as SSE chunks, with a usage chunk when asked, ending in [DONE]", async () => {
    const { client } = await start({ responses: [{ text: "streamed reply text", chunkSize: 5 }] });
    const stream = await client.chat.completions.create({
      model: "gpt-test",
      messages: hello,
      stream: true,
      stream_options: { include_usage: true },
    });
    const deltas: string[] = [];
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) deltas.push(chunk.choices[0].delta.content);
      finish ??= chunk.choices[0]?.finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(deltas).toEqual(["strea", "med r", "eply ", "text"]);
    expect(finish).toBe("stop");
    expect(usage?.completion_tokens).toBe(Math.ceil("streamed reply text".length / 4));
  });

  it("streams tool calls that the client's stream helper reassembles", async () => {
    const { client } = await start({
      responses: [
        {
          text: "Let me look.",
          toolCalls: [
            { name: "grep", arguments: { pattern: "TODO", path: "src" } },
            { name: "ls", arguments: "{}" },
          ],
          chunkSize: 4,
        },
      ],
    });
    const runner = client.chat.completions.stream({ model: "gpt-test", messages: hello });
    const final = await runner.finalChatCompletion();
    const message = final.choices[0]!.message;
    expect(message.content).toBe("Let me look.");
    expect(message.tool_calls?.map((call) => call.type === "function" && call.function)).toEqual([
      { name: "grep", arguments: '{"pattern":"TODO","path":"src"}' },
      { name: "ls", arguments: "{}" },
    ]);
    expect(final.choices[0]!.finish_reason).toBe("tool_calls");
  });

  it("sends no usage chunk unless stream_options.include_usage is set", async () => {
    const { client } = await start({ responses: ["short"] });
    const stream = await client.chat.completions.create({ model: "m", messages: hello, stream: true });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((chunk) => chunk.usage === undefined)).toBe(true);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("stop");
  });

  it("returns OpenAI's context_length_exceeded 400", async () => {
    const { client } = await start({
      responses: [contextLengthExceeded({ maxTokens: 8_192, requestedTokens: 9_001 })],
    });
    const error = await client.chat.completions
      .create({ model: "m", messages: hello })
      .catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const failure = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(failure.status).toBe(400);
    expect(failure.code).toBe("context_length_exceeded");
    expect(failure.message).toContain("maximum context length is 8192 tokens");
  });

  it("returns a 429 with retry-after that the client retries past", async () => {
    const { server } = await start({ responses: [rateLimited({ retryAfterSeconds: 0 }), "after the wait"] });
    const retrying = new OpenAI({ baseURL: server.url, apiKey: "sk-test", maxRetries: 1 });
    const completion = await retrying.chat.completions.create({ model: "m", messages: hello });
    expect(completion.choices[0]?.message.content).toBe("after the wait");
    expect(server.requests).toHaveLength(2);
  });

  it("exposes the 429's headers and code when not retried", async () => {
    const { client } = await start({ responses: [rateLimited({ retryAfterSeconds: 7 })] });
    const error = (await client.chat.completions
      .create({ model: "m", messages: hello })
      .catch((reason: unknown) => reason)) as InstanceType<typeof OpenAI.RateLimitError>;
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.headers.get("retry-after")).toBe("7");
    expect(error.code).toBe("rate_limit_exceeded");
  });

  it("returns a 401 for a bad key and a 500 for server errors", async () => {
    const { client } = await start({ responses: [invalidApiKey(), serverError()] });
    await expect(client.chat.completions.create({ model: "m", messages: hello })).rejects.toBeInstanceOf(
      OpenAI.AuthenticationError,
    );
    await expect(client.chat.completions.create({ model: "m", messages: hello })).rejects.toBeInstanceOf(
      OpenAI.InternalServerError,
    );
  });

  it("fails loudly when the script runs out, and answers from a function of the request", async () => {
    const { client } = await start({ responses: ["only one"] });
    await client.chat.completions.create({ model: "m", messages: hello });
    await expect(client.chat.completions.create({ model: "m", messages: hello })).rejects.toThrow(
      /no scripted response for request #2/,
    );
    const echo = await start({
      responses: (request) =>
        `you said: ${String(request.body.messages?.at(-1)?.content)} (#${request.index})`,
    });
    const completion = await echo.client.chat.completions.create({ model: "m", messages: hello });
    expect(completion.choices[0]?.message.content).toBe("you said: Say hello (#0)");
  });

  it("can drop the connection, before answering or in the middle of a stream", async () => {
    const { client } = await start({
      responses: [
        { disconnect: true },
        { text: "a long streamed answer", chunkSize: 2, disconnectAfterChunks: 3 },
      ],
    });
    await expect(client.chat.completions.create({ model: "m", messages: hello })).rejects.toBeInstanceOf(
      OpenAI.APIConnectionError,
    );
    const stream = await client.chat.completions.create({ model: "m", messages: hello, stream: true });
    const received: string[] = [];
    const read = async () => {
      for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? "");
    };
    await expect(read()).rejects.toThrow();
    expect(received.join("")).toBe("a lo");
  });

  it("lists its model and answers unknown routes with OpenAI's 404 body", async () => {
    const { server, client } = await start({ responses: [], model: "fake-4" });
    const models = await client.models.list();
    expect(models.data.map((model) => model.id)).toEqual(["fake-4"]);
    const response = await fetch(`${server.url}/embeddings`, { method: "POST", body: "{}" });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: "unknown_url" } });
    const invalid = await fetch(`${server.url}/chat/completions`, { method: "POST", body: "{not json" });
    expect(invalid.status).toBe(400);
    expect(server.requests).toHaveLength(0);
  });
});
