import { createServer as createHttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI, { APIError } from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { invalidApiKey, rateLimited, serverError } from "../test/fake-openai-responses.ts";
import {
  startHarness,
  type HarnessOptions,
  type ServerHarness,
} from "./test-support/server-harness.test-helpers.ts";

const harnesses: ServerHarness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((harness) => harness.close()));
});

async function setup(options: HarnessOptions) {
  const harness = await startHarness(options);
  harnesses.push(harness);
  const client = new OpenAI({
    baseURL: `${harness.server.url}/v1`,
    apiKey: harness.acme,
    maxRetries: 0,
    defaultHeaders: { "X-Ctxkit-Session": "limits-1" },
  });
  return { harness, client };
}

const hello: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: "hello" }];
const ask = (client: OpenAI) => client.chat.completions.create({ model: "m", messages: hello });
const askStream = (client: OpenAI) =>
  client.chat.completions.create({ model: "m", stream: true, messages: hello });

/** A request's failure, streamed or not (a stream's error surfaces while it is read). */
async function failure(client: OpenAI, stream: boolean): Promise<unknown> {
  try {
    if (!stream) await ask(client);
    else for await (const _chunk of await askStream(client)) void _chunk;
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("request limits", () => {
  it("answers 413 to a body over the limit, announced or streamed, and stores nothing", async () => {
    const { harness } = await setup({ server: { limits: { maxBodyBytes: 64 * 1024 } } });
    const big = { model: "m", messages: [{ role: "user", content: "x".repeat(100 * 1024) }] };
    const announced = await harness.call("/v1/chat/completions", {
      method: "POST",
      headers: { "x-ctxkit-session": "big" },
      json: big,
    });
    expect(announced.status).toBe(413);
    expect(((await announced.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
    const bytes = new TextEncoder().encode(JSON.stringify(big));
    const chunked = await harness.call("/v1/sessions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: new ReadableStream({
        start(controller) {
          for (let offset = 0; offset < bytes.length; offset += 8_192)
            controller.enqueue(bytes.slice(offset, offset + 8_192));
          controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(harness.upstream.requests).toHaveLength(0);
    expect((await harness.store.listSessions()).sessions).toHaveLength(0);
  });

  it("answers 415 to writes without a JSON content type (no cross-site form posts)", async () => {
    const { harness } = await setup({});
    const form = await harness.call("/v1/sessions/anything/clear", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "a=b",
    });
    expect(form.status).toBe(415);
    const none = await harness.call("/v1/sessions", { method: "POST" });
    expect(none.status).toBe(415);
  });

  it("answers 400 with the field at fault for invalid JSON and invalid bodies", async () => {
    const { harness } = await setup({});
    const broken = await harness.call("/v1/sessions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as { error: { code: string } }).error.code).toBe("invalid_json");
    const wrong = await harness.call("/v1/chat/completions", {
      method: "POST",
      json: { model: "m", messages: [] },
    });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({
      error: { type: "invalid_request_error", code: "invalid_input" },
    });
  });

  it("rate limits per key with 429 and Retry-After, leaving other keys alone", async () => {
    const { harness } = await setup({
      server: { limits: { rateLimit: { requestsPerSecond: 0.5, burst: 3 } } },
    });
    const statuses = [];
    for (let attempt = 0; attempt < 4; attempt++) statuses.push((await harness.call("/v1/me")).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await harness.call("/v1/me");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(((await limited.json()) as { error: { code: string } }).error.code).toBe("rate_limited");
    expect((await harness.call("/v1/me", { key: harness.globex })).status).toBe(200);
    expect((await harness.call("/health", { key: null })).status).toBe(200);
  });
});

describe("upstream failures", () => {
  it.each([false, true])("map to proper statuses with OpenAI-shaped bodies (stream: %s)", async (stream) => {
    const { harness, client } = await setup({
      responses: [
        invalidApiKey(),
        rateLimited({ retryAfterSeconds: 7 }),
        serverError(),
        { disconnect: true },
      ],
    });
    const invalid = await failure(client, stream);
    expect(invalid).toMatchObject({ status: 502, code: "upstream_auth_failed", type: "server_error" });
    expect(JSON.stringify((invalid as APIError).error)).not.toContain("sk-");
    const limited = await failure(client, stream);
    expect(limited).toMatchObject({ status: 429, code: "rate_limited" });
    expect((limited as APIError).headers?.get("retry-after")).toBe("7");
    expect(await failure(client, stream)).toMatchObject({
      status: 502,
      code: "upstream_error",
    });
    expect(await failure(client, stream)).toMatchObject({
      status: 502,
      code: "upstream_error",
    });
    expect(await harness.store.getSession("limits-1")).toBeUndefined();
  });

  it("answers 504 when the upstream stays silent past the timeout, and stores nothing", async () => {
    const { harness, client } = await setup({
      responses: [{ text: "too late", delayMs: 2_000 }],
      server: { limits: { upstreamTimeoutMs: 150 } },
    });
    expect(await ask(client).catch((error: unknown) => error)).toMatchObject({
      status: 504,
      code: "upstream_timeout",
    });
    expect(await harness.store.getSession("limits-1")).toBeUndefined();
  });

  it("a stream cut short ends with an error event and stores nothing; the same request then succeeds", async () => {
    const { harness, client } = await setup({
      responses: [{ text: "this reply will be cut", chunkSize: 2, disconnectAfterChunks: 3 }, "whole reply"],
    });
    const failure = await (async () => {
      for await (const _chunk of await askStream(client)) {
        // Drain: the error arrives as the stream's last event.
      }
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(APIError);
    expect(await harness.store.getSession("limits-1")).toBeUndefined();
    const retried = await ask(client);
    expect(retried.choices[0]?.message.content).toBe("whole reply");
    const stored = await harness.store.loadMessages("limits-1");
    expect(stored.map((message) => message.role)).toEqual(["user", "assistant"]);
  });

  it("a client that goes away mid-stream cancels the upstream call and leaves no trace", async () => {
    let closedEarly!: () => void;
    const upstreamClosed = new Promise<void>((resolve) => (closedEarly = resolve));
    let calls = 0;
    const chunk = (text: string) =>
      `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}\n\n`;
    const slow = createHttpServer((request, response) => {
      request.resume();
      request.on("end", () => {
        calls++;
        response.writeHead(200, { "content-type": "text/event-stream" });
        if (calls === 1) {
          response.write(chunk("first piece "));
          response.on("close", () => closedEarly()); // never finishes on its own
          return;
        }
        response.write(chunk("after"));
        response.end(
          `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`,
        );
      });
    });
    await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
    const { port } = slow.address() as AddressInfo;
    try {
      const { harness, client } = await setup({
        server: { upstream: { baseURL: `http://127.0.0.1:${port}/v1` } },
      });
      const controller = new AbortController();
      const stream = await client.chat.completions.create(
        { model: "m", stream: true, messages: [{ role: "user", content: "hello" }] },
        { signal: controller.signal },
      );
      await (async () => {
        for await (const _chunk of stream) controller.abort();
      })().catch(() => undefined);
      await upstreamClosed; // the proxy hung up on the upstream when the client left
      const next = await client.chat.completions.create({
        model: "m",
        stream: true,
        messages: [{ role: "user", content: "again" }],
      });
      let text = "";
      for await (const part of next) text += part.choices[0]?.delta.content ?? "";
      expect(text).toBe("after");
      const stored = await harness.store.loadMessages("limits-1");
      expect(stored.map((message) => [message.role, message.content[0]])).toEqual([
        ["user", { type: "text", text: "again" }],
        ["assistant", { type: "text", text: "after" }],
      ]);
    } finally {
      slow.closeAllConnections();
      await new Promise<void>((resolve) => slow.close(() => resolve()));
    }
  });

  it("answers 503 when no upstream is configured", async () => {
    const { harness } = await setup({ server: { upstream: undefined } });
    const answer = await harness.call("/v1/chat/completions", {
      method: "POST",
      json: { model: "m", messages: [{ role: "user", content: "hi" }] },
    });
    expect(answer.status).toBe(503);
  });
});
