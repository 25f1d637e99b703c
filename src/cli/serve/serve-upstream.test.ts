import { describe, expect, it } from "vitest";
import { ConfigError } from "../../errors/errors.ts";
import { anthropicUpstreamFromChoice } from "./serve-upstream.ts";

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
