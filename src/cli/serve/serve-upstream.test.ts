import { describe, expect, it } from "vitest";
import { ConfigError } from "../../errors/errors.ts";
import { anthropicUpstreamFromChoice, upstreamFromChoice } from "./serve-upstream.ts";

describe("anthropicUpstreamFromChoice", () => {
  it("forwards to Anthropic with the server's key, sent as x-api-key; ctxkit's own variable wins", () => {
    expect(anthropicUpstreamFromChoice({ env: { ANTHROPIC_API_KEY: "sk-ant-a" } })).toEqual({
      baseURL: "https://api.anthropic.com/v1",
      apiKey: "sk-ant-a",
      auth: "x-api-key",
    });
    expect(
      anthropicUpstreamFromChoice({
        env: { ANTHROPIC_API_KEY: "sk-ant-a", CTXKIT_ANTHROPIC_API_KEY: "sk-ant-b" },
      })?.apiKey,
    ).toBe("sk-ant-b");
    expect(anthropicUpstreamFromChoice({ env: {}, apiKeys: { anthropic: "sk-ant-c" } })?.apiKey).toBe(
      "sk-ant-c",
    );
  });

  it("has none without a key, unless the upstream is local; never reads ANTHROPIC_BASE_URL (it may name ctxkit)", () => {
    expect(
      anthropicUpstreamFromChoice({ env: { ANTHROPIC_BASE_URL: "http://127.0.0.1:7710" } }),
    ).toBeUndefined();
    expect(anthropicUpstreamFromChoice({ anthropicUpstream: "http://127.0.0.1:4000/v1/", env: {} })).toEqual({
      baseURL: "http://127.0.0.1:4000/v1",
      auth: "x-api-key",
    });
    expect(() => anthropicUpstreamFromChoice({ anthropicUpstream: "ftp://x", env: {} })).toThrow(ConfigError);
  });
});

describe("upstreamFromChoice: the fields beside OpenAI's own", () => {
  const fields = (choice: Parameters<typeof upstreamFromChoice>[0]) => {
    const upstream = upstreamFromChoice(choice);
    return [upstream?.promptCacheKey, upstream?.reasoningContent];
  };
  const keys = { OPENAI_API_KEY: "sk-a", GEMINI_API_KEY: "AIza-b" };

  it("follow the provider's catalog entry: prompt_cache_key for OpenAI only, reasoning_content but to the hosted ones", () => {
    expect(fields({ model: "openai:gpt-4.1-mini", env: keys })).toEqual([true, false]);
    expect(fields({ model: "google:gemini-2.5-flash", env: keys })).toEqual([false, false]);
    expect(fields({ model: "openai-compatible:deepseek-v4-pro@https://api.deepseek.com", env: {} })).toEqual([
      false,
      true,
    ]);
    expect(fields({ model: "ollama:llama3.1", env: {} })).toEqual([false, true]);
  });

  it("keep the server's defaults for an --upstream URL (nothing is known of it), and the flags win either way", () => {
    expect(fields({ upstream: "https://gateway.example/v1", model: "openai:gpt-4.1", env: keys })).toEqual([
      undefined,
      undefined,
    ]);
    expect(
      fields({
        upstream: "https://gateway.example/v1",
        env: {},
        promptCacheKey: true,
        reasoningContent: false,
      }),
    ).toEqual([true, false]);
    expect(fields({ model: "openai:gpt-4.1", env: keys, promptCacheKey: false })).toEqual([false, false]);
    expect(fields({ model: "google:gemini-2.5-flash", env: keys, reasoningContent: true })).toEqual([
      false,
      true,
    ]);
  });
});
