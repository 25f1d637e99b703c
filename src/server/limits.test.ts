import { createServer as createHttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI, { APIError } from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../errors/errors.ts";
import { MemorySessionStore } from "../store/memory/index.ts";
import { invalidApiKey, rateLimited, serverError } from "../test/fake-openai-responses.ts";
import { MemoryKeyStore } from "./auth/memory-key-store.ts";
import { createServer } from "./create-server.ts";
import type { ServerOptions } from "./server-options.ts";
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
/** A JSON POST whose body is streamed in `chunk`-byte pieces (sent chunked: no Content-Length). */
function chunkedJson(value: unknown, chunk: number): RequestInit {
  const bytes = new TextEncoder().encode(JSON.stringify(value));
  return {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: new ReadableStream({
      start(controller) {
        for (let offset = 0; offset < bytes.length; offset += chunk)
          controller.enqueue(bytes.slice(offset, offset + chunk));
        controller.close();
      },
    }),
    duplex: "half",
  } as RequestInit;
}

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
    const chunked = await harness.call("/v1/sessions", chunkedJson(big, 8_192));
    expect(chunked.status).toBe(413);
    expect(harness.upstream.requests).toHaveLength(0);
    expect((await harness.store.listSessions()).sessions).toHaveLength(0);
    // Under the limit, a streamed body is read whole and used like an announced one.
    const accepted = await harness.call(
      "/v1/sessions",
      chunkedJson({ id: "chunked", title: "streamed in chunks" }, 8),
    );
    expect(accepted.status).toBe(201);
    expect(((await accepted.json()) as { session: { id: string } }).session.id).toBe("chunked");
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
    expect(await harness.store.getSession("acme/limits-1")).toBeUndefined();
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
    expect(await harness.store.getSession("acme/limits-1")).toBeUndefined();
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
    expect(await harness.store.getSession("acme/limits-1")).toBeUndefined();
    const retried = await ask(client);
    expect(retried.choices[0]?.message.content).toBe("whole reply");
    const stored = await harness.store.loadMessages("acme/limits-1");
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
      const stored = await harness.store.loadMessages("acme/limits-1");
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

describe("limits per key and per tenant", () => {
  const asKey = (harness: ServerHarness, key: string, session?: string) =>
    new OpenAI({
      baseURL: `${harness.server.url}/v1`,
      apiKey: key,
      maxRetries: 0,
      ...(session !== undefined && { defaultHeaders: { "X-Ctxkit-Session": session } }),
    });

  it("throttles a key with a tighter rate (429, Retry-After, OpenAI's shape) while its tenant's other key goes on", async () => {
    const { harness } = await setup({ responses: ["one", "two", "three", "four", "five"] });
    const tight = await harness.keys.create("acme", "tight", {
      rateLimit: { requestsPerSecond: 0.2, burst: 2, maxWaitMs: 0 },
    });
    const tightClient = asKey(harness, tight.key);
    expect((await ask(tightClient)).choices[0]?.message.content).toBe("one");
    expect((await ask(tightClient)).choices[0]?.message.content).toBe("two");
    const refused = await ask(tightClient).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(APIError);
    expect(refused).toMatchObject({ status: 429, code: "rate_limited", type: "rate_limit_error" });
    expect(Number((refused as APIError).headers?.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((refused as APIError).message).toContain("this key");
    const sibling = asKey(harness, harness.acme);
    const replies = [await ask(sibling), await ask(sibling), await ask(sibling)];
    expect(replies.map((reply) => reply.choices[0]?.message.content)).toEqual(["three", "four", "five"]);
    expect(harness.upstream.requests).toHaveLength(5); // the refused request never reached the upstream
    const metrics = await (await harness.call("/metrics", { key: harness.operator })).text();
    expect(metrics).toMatch(/ctxkit_rate_limited_total 1\b/);
  });

  it("a tenant's rate limits the sum of its keys, and its refusals leave other tenants alone", async () => {
    const { harness } = await setup({
      server: { tenantLimits: { acme: { rateLimit: { requestsPerSecond: 0.2, burst: 3 } } } },
    });
    const second = (await harness.keys.create("acme", "second")).key;
    const statuses = [];
    for (const key of [harness.acme, second, harness.acme, second]) {
      statuses.push((await harness.call("/v1/me", { key })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    const refused = await harness.call("/v1/me", { key: harness.acme });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toMatchObject({
      error: { code: "rate_limited", message: expect.stringContaining("this tenant") },
    });
    for (let attempt = 0; attempt < 5; attempt++) {
      expect((await harness.call("/v1/me", { key: harness.globex })).status).toBe(200);
    }
  });

  it("a request its tenant's rate refuses takes nothing from its key's own rate", async () => {
    const { harness } = await setup({
      server: { tenantLimits: { acme: { rateLimit: { requestsPerSecond: 2, burst: 1, maxWaitMs: 0 } } } },
    });
    // One request per 20 s for this key: a token it lost to the tenant's refusal would not come back in the test.
    const slow = await harness.keys.create("acme", "slow", {
      rateLimit: { requestsPerSecond: 0.05, burst: 1, maxWaitMs: 0 },
    });
    expect((await harness.call("/v1/me")).status).toBe(200); // the tenant's one token, by its other key
    const refused = await harness.call("/v1/me", { key: slow.key });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain("this tenant");
    await new Promise((resolve) => setTimeout(resolve, 700)); // the tenant's bucket refills (2/s)
    expect((await harness.call("/v1/me", { key: slow.key })).status).toBe(200);
    const own = await harness.call("/v1/me", { key: slow.key });
    expect(own.status).toBe(429);
    expect(((await own.json()) as { error: { message: string } }).error.message).toContain("this key");
  });

  it("without auth, applies tenant local's limits", async () => {
    const { harness } = await setup({
      server: {
        auth: false,
        keys: undefined,
        tenantLimits: { local: { rateLimit: { requestsPerSecond: 0.2, burst: 2 }, maxBodyBytes: 1_024 } },
      },
    });
    const statuses = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      statuses.push((await harness.call("/v1/me", { key: null })).status);
    }
    expect(statuses).toEqual([200, 200, 429]);
    const big = await harness.call("/v1/sessions", {
      method: "POST",
      key: null,
      json: { pad: "x".repeat(2_000) },
    });
    expect(big.status).toBe(413);
  });

  it("holds a key or a tenant to a smaller body (413, announced or streamed), never above the server's", async () => {
    const { harness } = await setup({
      server: {
        limits: { maxBodyBytes: 16 * 1024 },
        tenantLimits: { globex: { maxBodyBytes: 2_048 } },
      },
    });
    const small = (await harness.keys.create("acme", "small", { maxBodyBytes: 2_048 })).key;
    const roomy = (await harness.keys.create("acme", "roomy", { maxBodyBytes: 1024 * 1024 })).key;
    const globexRoomy = (await harness.keys.create("globex", "roomy", { maxBodyBytes: 8 * 1024 })).key;
    // 4 KiB of JSON that is not a valid request: 400 once read, 413 when refused before.
    const body = { model: "m", messages: [], padding: "x".repeat(4 * 1024) };
    const post = (key: string, json: unknown = body) =>
      harness.call("/v1/chat/completions", { method: "POST", key, json });
    const codeOf = async (response: Response) =>
      ((await response.json()) as { error: { code: string } }).error.code;
    const refused = await post(small);
    expect(refused.status).toBe(413);
    expect(await codeOf(refused)).toBe("payload_too_large");
    expect((await post(harness.acme)).status).toBe(400); // the same body, read and judged, for the key's sibling
    expect((await post(harness.globex)).status).toBe(413); // the tenant's limit
    expect((await post(globexRoomy)).status).toBe(400); // the key's own limit wins over its tenant's
    const huge = { ...body, padding: "x".repeat(20 * 1024) };
    expect((await post(roomy, huge)).status).toBe(413); // capped at the server's 16 KiB

    const streamed = await harness.call("/v1/sessions", { ...chunkedJson(body, 512), key: small });
    expect(streamed.status).toBe(413);
    expect(harness.upstream.requests).toHaveLength(0);
    expect((await harness.store.listSessions()).sessions).toHaveLength(0);
  });

  it("gives a key with a short upstream timeout the usual 504, while the key's own longer one wins over its tenant's", async () => {
    const { harness } = await setup({
      responses: [
        { text: "too late", delayMs: 1_500 },
        { text: "too late for the tenant", delayMs: 1_500 },
        { text: "in time for the patient key", delayMs: 600 },
      ],
      server: { tenantLimits: { globex: { upstreamTimeoutMs: 200 } } },
    });
    const hasty = (await harness.keys.create("acme", "hasty", { upstreamTimeoutMs: 150 })).key;
    const patient = (await harness.keys.create("globex", "patient", { upstreamTimeoutMs: 5_000 })).key;
    expect(await ask(asKey(harness, hasty, "hasty-1")).catch((error: unknown) => error)).toMatchObject({
      status: 504,
      code: "upstream_timeout",
    });
    expect(await harness.store.getSession("acme/hasty-1")).toBeUndefined();
    expect(await ask(asKey(harness, harness.globex)).catch((error: unknown) => error)).toMatchObject({
      status: 504,
      code: "upstream_timeout",
    });
    const reply = await ask(asKey(harness, patient));
    expect(reply.choices[0]?.message.content).toBe("in time for the patient key");
  });

  it("refuses invalid tenant limits with a ConfigError naming the field", () => {
    const build = (tenantLimits: unknown) => () =>
      createServer({
        store: new MemorySessionStore(),
        keys: new MemoryKeyStore(),
        tenantLimits: tenantLimits as ServerOptions["tenantLimits"],
      });
    expect(build({ acme: { maxBodyBytes: 10 } })).toThrow(ConfigError);
    expect(build({ acme: { maxBodyBytes: 10 } })).toThrow(/acme\.maxBodyBytes/);
    expect(build({ acme: { rateLimit: { requestsPerSecond: 5 } } })).toThrow(/acme\.rateLimit/);
    expect(build({ acme: { maxBody: 4096 } })).toThrow(/maxBody/); // a misspelt limit is not silently ignored
    expect(build({ "not a tenant!": {} })).toThrow(ConfigError);
  });
});
