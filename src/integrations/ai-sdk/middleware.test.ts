import { generateText, stepCountIs, wrapLanguageModel } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { FakeSummarizer } from "../../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../../test/fake-token-counter.ts";
import { ctxkitMiddleware } from "./middleware.ts";
import { scriptedReader, tools, usage } from "./scripted-reader.test-helpers.ts";

/** Reports the prompt's size in 4-character tokens, as a provider would bill it. */
const scriptedModel = (steps: number) =>
  scriptedReader(steps, (options) => Math.ceil(JSON.stringify(options.prompt).length / 4));

describe("ctxkitMiddleware", () => {
  it("governs every step of a generateText agent loop and keeps untouched messages identical", async () => {
    const base = scriptedModel(30);
    const middleware = ctxkitMiddleware({
      contextWindow: 24_000,
      reservedOutputTokens: 2_000,
      counter: new FakeTokenCounter(),
      summarizer: new FakeSummarizer(),
    });
    const result = await generateText({
      model: wrapLanguageModel({ model: base, middleware }),
      tools,
      prompt: "Read every file in src/",
      stopWhen: stepCountIs(40),
    });
    expect(result.text).toBe("all files read");
    const calls = base.doGenerateCalls;
    expect(calls).toHaveLength(31);
    const sizes = calls.map((call) => new FakeTokenCounter().countText(JSON.stringify(call.prompt)));
    // Ungoverned, 30 reads of ~2.4k tokens would be ~70k tokens; every governed request stays inside the window.
    expect(Math.max(...sizes)).toBeLessThan(24_000);
    for (const call of calls) {
      // Every tool call in the prompt is answered, every result has its call.
      const callIds = call.prompt.flatMap((message) =>
        message.role === "assistant"
          ? message.content.flatMap((part) => (part.type === "tool-call" ? [part.toolCallId] : []))
          : [],
      );
      const resultIds = call.prompt.flatMap((message) =>
        message.role === "tool"
          ? message.content.flatMap((part) => (part.type === "tool-result" ? [part.toolCallId] : []))
          : [],
      );
      expect(new Set(resultIds)).toEqual(new Set(callIds));
      expect(call.prompt.find((message) => message.role === "user")?.content).toEqual([
        { type: "text", text: "Read every file in src/" },
      ]);
    }
    // Between the first two requests nothing was rewritten: the second starts with the first, byte for byte.
    expect(JSON.stringify(calls[1]!.prompt).startsWith(JSON.stringify(calls[0]!.prompt).slice(0, -1))).toBe(
      true,
    );
    expect(middleware.governor.view.length).toBeGreaterThan(0);
  });

  it("recovers from a provider overflow error with one governed retry", async () => {
    let attempts = 0;
    const base = new MockLanguageModelV4({
      doGenerate: async () => {
        attempts++;
        if (attempts === 1)
          throw Object.assign(new Error("prompt is too long: 210000 tokens > 200000 maximum"), {
            statusCode: 400,
          });
        return {
          content: [{ type: "text", text: "ok" }],
          finishReason: { unified: "stop", raw: "stop" },
          usage: usage(10),
          warnings: [],
        };
      },
    });
    const middleware = ctxkitMiddleware({
      contextWindow: 200_000,
      counter: new FakeTokenCounter(),
      summarizer: new FakeSummarizer(),
    });
    const result = await generateText({
      model: wrapLanguageModel({ model: base, middleware }),
      prompt: "hello",
      maxRetries: 0,
    });
    expect(result.text).toBe("ok");
    expect(attempts).toBe(2);
  });
});
