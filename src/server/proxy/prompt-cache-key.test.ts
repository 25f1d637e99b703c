import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { upstreamFromChoice } from "../../cli/serve/serve-upstream.ts";
import { startFakeOpenAIServer, type FakeOpenAIServer } from "../../test/fake-openai-server.ts";
import { startHarness, type ServerHarness } from "../test-support/server-harness.test-helpers.ts";
import type { UpstreamOptions } from "../upstream/upstream-options.ts";
import { withPromptCacheKey } from "./chat-request.ts";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A harness whose proxy forwards to a scripted upstream with `options` (the harness's own upstream idles). */
async function setup(options: Partial<UpstreamOptions>) {
  const upstream: FakeOpenAIServer = await startFakeOpenAIServer({ responses: ["one", "two", "three"] });
  closers.push(() => upstream.close());
  const harness: ServerHarness = await startHarness({
    server: { upstream: { baseURL: upstream.url, model: "fake-model", ...options } },
  });
  closers.push(() => harness.close());
  const client = (headers: Record<string, string>) =>
    new OpenAI({
      baseURL: `${harness.server.url}/v1`,
      apiKey: harness.acme,
      maxRetries: 0,
      defaultHeaders: headers,
    });
  return { upstream, harness, client };
}

const messages = [{ role: "user" as const, content: "Hi" }];

describe("prompt_cache_key in the proxy's upstream body", () => {
  it("with promptCacheKey: the session's store id in stateful mode, the client's own when it set one, absent in stateless mode", async () => {
    const { upstream, client } = await setup({ promptCacheKey: true });
    await client({ "X-Ctxkit-Session": "chat-1" }).chat.completions.create({ model: "m", messages });
    await client({ "X-Ctxkit-Session": "chat-2" }).chat.completions.create({
      model: "m",
      messages,
      prompt_cache_key: "tenant-wide",
    });
    await client({}).chat.completions.create({ model: "m", messages });
    expect(upstream.requests.map((request) => request.body["prompt_cache_key"])).toEqual([
      "acme/chat-1",
      "tenant-wide",
      undefined,
    ]);
  });

  it("is not sent to an upstream not known to take it (the option unset), but a client's own still is", async () => {
    const { upstream, client } = await setup({});
    await client({ "X-Ctxkit-Session": "chat-1" }).chat.completions.create({ model: "m", messages });
    await client({ "X-Ctxkit-Session": "chat-2" }).chat.completions.create({
      model: "m",
      messages,
      prompt_cache_key: "mine",
    });
    expect(upstream.requests.map((request) => "prompt_cache_key" in request.body)).toEqual([false, true]);
  });

  it("ctxkit serve --model google:… sends none: Google's OpenAI endpoint refuses the unknown field", async () => {
    const strict = createServer((request, response) => {
      let raw = "";
      request.on("data", (chunk: Buffer) => (raw += chunk.toString()));
      request.on("end", () => {
        const body = JSON.parse(raw) as Record<string, unknown>;
        if ("prompt_cache_key" in body) {
          response.writeHead(400, { "content-type": "application/json" });
          response.end(
            JSON.stringify([
              {
                error: {
                  code: 400,
                  message:
                    'Invalid JSON payload received. Unknown name "prompt_cache_key": Cannot find field.',
                  status: "INVALID_ARGUMENT",
                },
              },
            ]),
          );
          return;
        }
        response.writeHead(200, { "content-type": "application/json" });
        response.end(
          JSON.stringify({
            id: "x",
            object: "chat.completion",
            created: 1,
            model: body["model"],
            choices: [{ index: 0, message: { role: "assistant", content: "hello" }, finish_reason: "stop" }],
            usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => strict.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise((resolve) => strict.close(() => resolve())));
    const cli = upstreamFromChoice({
      model: "google:gemini-2.5-flash",
      env: { GEMINI_API_KEY: "AIza-test" },
    });
    expect(cli?.baseURL).toBe("https://generativelanguage.googleapis.com/v1beta/openai");
    const harness = await startHarness({
      server: {
        upstream: { ...cli!, baseURL: `http://127.0.0.1:${(strict.address() as AddressInfo).port}` },
      },
    });
    closers.push(() => harness.close());
    const response = await harness.call("/v1/chat/completions", {
      method: "POST",
      headers: { "x-ctxkit-session": "gem-1" },
      json: { model: "m", messages },
    });
    expect(response.status).toBe(200);
    expect(
      ((await response.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message
        .content,
    ).toBe("hello");
  });

  it("stays within OpenAI's 64 characters", () => {
    const body = { model: "m", messages: [] };
    expect(withPromptCacheKey(body, "chat-1", { promptCacheKey: false })).toBe(body);
    expect(withPromptCacheKey(body, "chat-1", {})).toBe(body);
    const long = "session-".repeat(20);
    const on = { promptCacheKey: true };
    const key = (withPromptCacheKey(body, long, on) as { prompt_cache_key: string }).prompt_cache_key;
    expect(key).toHaveLength(64);
    expect(key.startsWith("session-session-")).toBe(true);
    const other = (withPromptCacheKey(body, `${long}x`, on) as { prompt_cache_key: string }).prompt_cache_key;
    expect(other).not.toBe(key);
  });
});
