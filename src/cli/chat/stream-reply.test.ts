import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { simulateReadableStream } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { createContextEngine } from "../../engine/context-engine.ts";
import { MemorySessionStore } from "../../store/memory/index.ts";
import { FakeSummarizer } from "../../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../../test/fake-token-counter.ts";
import { streamReply } from "./stream-reply.ts";

const chunks: LanguageModelV4StreamPart[] = [
  { type: "text-start", id: "t" },
  { type: "text-delta", id: "t", delta: "Hello." },
  { type: "text-end", id: "t" },
  {
    type: "finish",
    finishReason: { unified: "stop", raw: "stop" },
    usage: {
      inputTokens: { total: 2_000, noCache: 2_000, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 2, text: 2, reasoning: 0 },
    },
  },
];

describe("streamReply", () => {
  it("sends ctxkit chat's request with the Anthropic model's cache breakpoints", async () => {
    const model = new MockLanguageModelV4({
      provider: "anthropic.messages",
      modelId: "claude-sonnet-4-5",
      doStream: async () => ({ stream: simulateReadableStream({ chunks }) }),
    });
    const engine = await createContextEngine({
      store: new MemorySessionStore(),
      contextWindow: 100_000,
      tokenCounter: new FakeTokenCounter(),
      summarizer: new FakeSummarizer(),
    });
    const session = engine.session("chat");
    await session.addUser("Hi");
    const signal = await session.beginRequest();
    const system = "You answer questions about this repository. ".repeat(120);
    const request = await session.prepare({ system, signal });
    const reply = await streamReply({ model, request, signal, maxRetries: 0, onDelta: () => {} });
    expect(reply.content).toEqual([{ type: "text", text: "Hello." }]);
    const [call] = model.doStreamCalls;
    const cacheControl = call!.prompt.map(
      (message) => message.providerOptions?.["anthropic"]?.["cacheControl"],
    );
    expect(call!.prompt.map((message) => message.role)).toEqual(["system", "user"]);
    expect(cacheControl).toEqual([{ type: "ephemeral" }, { type: "ephemeral" }]);
  });
});
