import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { generateText } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { ProviderError } from "../errors/provider-errors.ts";
import { classifyProviderError } from "./classify-provider-error.ts";
import { resolveModel } from "./resolve-model.ts";
import { withRetries } from "./with-retries.ts";

interface RecordedRequest {
  path: string;
  authorization: string | undefined;
  body: { model: string; messages: { role: string; content: unknown }[] };
}

type Reply = { status: number; headers?: Record<string, string>; body: unknown };

/** A minimal OpenAI chat-completions server on loopback: answers each request with the next scripted reply. */
async function startServer(
  replies: Reply[],
): Promise<{ url: string; requests: RecordedRequest[]; server: Server }> {
  const requests: RecordedRequest[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let raw = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (raw += chunk));
    request.on("end", () => {
      requests.push({
        path: request.url ?? "",
        authorization: request.headers.authorization,
        body: JSON.parse(raw) as RecordedRequest["body"],
      });
      const reply = replies[Math.min(requests.length - 1, replies.length - 1)];
      if (reply === undefined) throw new Error("no scripted reply");
      response.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
      response.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, requests, server };
}

const completion = (text: string) => ({
  status: 200,
  body: {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1_767_225_600,
    model: "test",
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
    usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
  },
});

const rateLimited: Reply = {
  status: 429,
  headers: { "retry-after": "0" },
  body: {
    error: {
      message: "Rate limit reached for test. Please try again in 0s.",
      type: "requests",
      code: "rate_limit_exceeded",
    },
  },
};

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

describe("resolveModel against a real OpenAI-compatible server", () => {
  it("sends the prompt to <baseURL>/chat/completions and returns the reply", async () => {
    const fake = await startServer([completion("hello from the fake server")]);
    servers.push(fake.server);
    const model = await resolveModel(`openai-compatible:test@${fake.url}`, {
      env: { OPENAI_COMPATIBLE_API_KEY: "local-key" },
    });
    const result = await generateText({ model, prompt: "Say hello", maxRetries: 0 });
    expect(result.text).toBe("hello from the fake server");
    expect(result.usage.inputTokens).toBe(12);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]?.path).toBe("/v1/chat/completions");
    expect(fake.requests[0]?.authorization).toBe("Bearer local-key");
    expect(fake.requests[0]?.body.model).toBe("test");
    expect(fake.requests[0]?.body.messages.at(-1)).toEqual({ role: "user", content: "Say hello" });
  });

  it("withRetries gets past a 429 with retry-after and succeeds on the next attempt", async () => {
    const fake = await startServer([rateLimited, completion("second time lucky")]);
    servers.push(fake.server);
    const model = await resolveModel(`openai-compatible:test@${fake.url}`, { env: {} });
    const kinds: string[] = [];
    const result = await withRetries(() => generateText({ model, prompt: "hi", maxRetries: 0 }), {
      maxRetries: 2,
      baseDelayMs: 1,
      onRetry: (notice) => kinds.push(`${notice.error.kind}:${notice.delayMs}`),
    });
    expect(result.text).toBe("second time lucky");
    expect(fake.requests).toHaveLength(2);
    expect(kinds).toEqual(["rate_limit:0"]);
  });

  it("a 401 from the server is classified as auth and not retried", async () => {
    const fake = await startServer([
      {
        status: 401,
        body: {
          error: { message: "invalid api key", type: "invalid_request_error", code: "invalid_api_key" },
        },
      },
    ]);
    servers.push(fake.server);
    const model = await resolveModel(`openai-compatible:test@${fake.url}`, { env: {} });
    const failure: unknown = await withRetries(() => generateText({ model, prompt: "hi", maxRetries: 0 }), {
      maxRetries: 3,
      baseDelayMs: 1,
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ProviderError);
    expect((failure as ProviderError).kind).toBe("auth");
    expect(fake.requests).toHaveLength(1);
  });

  it("a server that is not listening is a network error that names its URL", async () => {
    const fake = await startServer([completion("unused")]);
    await new Promise((resolve) => fake.server.close(resolve));
    const model = await resolveModel(`openai-compatible:test@${fake.url}`, { env: {} });
    const error: unknown = await generateText({ model, prompt: "hi", maxRetries: 0 }).catch(
      (reason: unknown) => reason,
    );
    const failure = classifyProviderError(error);
    expect(failure.kind).toBe("network");
    expect(failure.message).toContain(`is the server at ${fake.url} running?`);
  });
});
