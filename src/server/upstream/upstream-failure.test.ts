import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { CtxkitError } from "../../errors/ctxkit-error.ts";
import { isContextOverflowError } from "../../errors/overflow-recognition.ts";
import { createContextEngine } from "../../engine/context-engine.ts";
import { sequentialIds } from "../../model/ids.ts";
import { MemorySessionStore } from "../../store/memory/index.ts";
import { FakeSummarizer } from "../../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../../test/fake-token-counter.ts";
import { HttpError } from "../http/http-error.ts";
import { startHarness } from "../test-support/server-harness.test-helpers.ts";
import { upstreamFailure } from "./upstream-failure.ts";

/** A session of four turns, each reading a big file: something for a recovery to trim. */
async function session() {
  const engine = await createContextEngine({
    store: new MemorySessionStore(),
    contextWindow: 1_000_000,
    tokenCounter: new FakeTokenCounter(),
    summarizer: new FakeSummarizer(),
    ids: sequentialIds(),
    clock: () => new Date("2026-03-01T12:00:00Z"),
  });
  const session = engine.session("overflowing");
  for (let turn = 1; turn <= 4; turn++) {
    let read = false;
    await session.run(
      `turn ${turn}`,
      async () => {
        if (read) return { content: `done ${turn}` };
        read = true;
        return { content: [{ type: "tool-call", id: `read_${turn}`, name: "read_file", input: {} }] };
      },
      { executeTool: async () => ({ content: `file ${turn}\n${"x".repeat(30_000)}` }) },
    );
  }
  return session;
}

describe("an upstream's failure as the proxy reports it", () => {
  it("an overflow is a typed ctxkit error that the engine's recovery takes by its code", async () => {
    const body = JSON.stringify({
      error: {
        message: "This model's maximum context length is 8192 tokens",
        code: "context_length_exceeded",
      },
    });
    const failure = upstreamFailure(400, {}, body);
    expect(CtxkitError.isInstance(failure)).toBe(true);
    expect(failure).toMatchObject({ status: 400, code: "context_overflow" });

    const governed = await session();
    // A failure with another code is not an overflow, even when its text names one.
    const other = new HttpError(502, "upstream_error", "the upstream failed (context_overflow in its log)");
    expect(await governed.recover(other)).toBeUndefined();
    expect(await governed.recover(failure)).toMatchObject({ type: "emergency-recovery", stage: "trimmed" });
  });

  it("keys the upstream quoted are redacted, and other statuses keep their codes", () => {
    const key = "sk-live-0123456789abcdef";
    const rejected = upstreamFailure(422, {}, JSON.stringify({ error: { message: `bad key ${key}` } }), [
      key,
    ]);
    expect(rejected).toMatchObject({ status: 400, code: "upstream_rejected" });
    expect(rejected.message).not.toContain(key);
    expect(upstreamFailure(503, {}, "down")).toMatchObject({ status: 502, code: "upstream_error" });
    expect(upstreamFailure(429, { "retry-after": "7" }, "slow down")).toMatchObject({
      status: 429,
      code: "rate_limited",
      headers: { "Retry-After": "7" },
    });
  });
});

describe("a ctxkit server's overflow, read back by the providers' SDKs", () => {
  it("is recognised by its code, which the SDK keeps, not by the words of its message", async () => {
    const harness = await startHarness({ contextWindow: 2_000, responses: ["never sent"] });
    try {
      const openai = new OpenAI({
        baseURL: `${harness.server.url}/v1`,
        apiKey: harness.acme,
        maxRetries: 0,
        defaultHeaders: { "X-Ctxkit-Session": "too-big" },
      });
      const failure = await openai.chat.completions
        .create({ model: "m", messages: [{ role: "user", content: "word ".repeat(20_000) }] })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(failure).toMatchObject({ status: 400, code: "context_overflow" });
      expect(isContextOverflowError(failure)).toBe(true);
      // Its words alone say nothing a provider would: the code is what carries the overflow across.
      expect(isContextOverflowError(new Error((failure as Error).message))).toBe(false);
      const anthropic = new Anthropic({
        baseURL: harness.server.url,
        apiKey: harness.acme,
        maxRetries: 0,
        defaultHeaders: { "X-Ctxkit-Session": "too-big-too" },
      });
      const refused = await anthropic.messages
        .create({
          model: "m",
          max_tokens: 100,
          messages: [{ role: "user", content: "word ".repeat(20_000) }],
        })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(refused).toMatchObject({ status: 400, error: { error: { code: "context_overflow" } } });
      expect(isContextOverflowError(refused)).toBe(true);
      expect(isContextOverflowError(new Error((refused as Error).message))).toBe(false);
      expect(harness.upstream.requests).toHaveLength(0);
    } finally {
      await harness.close();
    }
  });
});
