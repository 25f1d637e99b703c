import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { startHarness, type ServerHarness } from "../test-support/server-harness.test-helpers.ts";
import { withPromptCacheKey } from "./chat-request.ts";

const harnesses: ServerHarness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((harness) => harness.close()));
});

async function setup() {
  const harness = await startHarness({ responses: ["one", "two", "three"] });
  harnesses.push(harness);
  const client = (headers: Record<string, string>) =>
    new OpenAI({
      baseURL: `${harness.server.url}/v1`,
      apiKey: harness.acme,
      maxRetries: 0,
      defaultHeaders: headers,
    });
  return { harness, client };
}

describe("prompt_cache_key in the proxy's upstream body", () => {
  it("is the session's store id in stateful mode, the client's own when it set one, and absent in stateless mode", async () => {
    const { harness, client } = await setup();
    const messages = [{ role: "user" as const, content: "Hi" }];
    await client({ "X-Ctxkit-Session": "chat-1" }).chat.completions.create({ model: "m", messages });
    await client({ "X-Ctxkit-Session": "chat-2" }).chat.completions.create({
      model: "m",
      messages,
      prompt_cache_key: "tenant-wide",
    });
    await client({}).chat.completions.create({ model: "m", messages });
    expect(harness.upstream.requests.map((request) => request.body["prompt_cache_key"])).toEqual([
      "acme/chat-1",
      "tenant-wide",
      undefined,
    ]);
  });

  it("can be turned off for servers that reject unknown fields, and stays within OpenAI's 64 characters", () => {
    const body = { model: "m", messages: [] };
    expect(withPromptCacheKey(body, "chat-1", { promptCacheKey: false })).toBe(body);
    const long = "session-".repeat(20);
    const key = (withPromptCacheKey(body, long, {}) as { prompt_cache_key: string }).prompt_cache_key;
    expect(key).toHaveLength(64);
    expect(key.startsWith("session-session-")).toBe(true);
    const other = (withPromptCacheKey(body, `${long}x`, {}) as { prompt_cache_key: string }).prompt_cache_key;
    expect(other).not.toBe(key);
  });
});
