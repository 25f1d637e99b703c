import { describe, expect, it } from "vitest";
import { toAnthropic } from "../formats/providers/anthropic/to-anthropic.ts";
import type { OpaqueBlock } from "../model/message.ts";
import { sequentialIds } from "../model/ids.ts";
import { MemorySessionStore } from "../store/memory/index.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { createContextEngine } from "./context-engine.ts";
import { preset } from "../governance/presets.ts";

/** A web search's call and its (large, encrypted) results, as Anthropic returns them. */
function search(turn: number): [OpaqueBlock, OpaqueBlock] {
  const id = `srvtoolu_${turn}`;
  const results = Array.from({ length: 20 }, (_, index) => ({
    type: "web_search_result",
    url: `https://example.com/${turn}/${index}`,
    title: `Result ${index}`,
    encrypted_content: "x".repeat(400),
  }));
  return [
    {
      type: "opaque",
      provider: "anthropic",
      data: { type: "server_tool_use", id, name: "web_search", input: { query: `q${turn}` } },
    },
    {
      type: "opaque",
      provider: "anthropic",
      data: { type: "web_search_tool_result", tool_use_id: id, content: results },
    },
  ];
}

describe("a session whose replies used server tools (opaque blocks)", () => {
  it("counts them, compacts around them, and keeps each call right before its result in what is sent", async () => {
    const summarizer = new FakeSummarizer();
    const engine = await createContextEngine({
      store: new MemorySessionStore(),
      contextWindow: 40_000,
      tokenCounter: new FakeTokenCounter(),
      summarizer,
      pipeline: preset("default", { cacheAware: false }),
      ids: sequentialIds(),
      clock: () => new Date("2026-03-01T12:00:00Z"),
    });
    const session = engine.session("searching");
    let compacted = false;
    for (let turn = 0; turn < 30; turn++) {
      await session.addUser(`Search the web for topic ${turn}.`);
      const request = await session.prepare();
      compacted ||= request.messages.some((message) => message.kind === "summary");
      expect(request.tokens.total).toBeLessThanOrEqual(40_000);
      const sent = toAnthropic(request.messages).messages;
      for (const message of sent) {
        if (typeof message.content === "string") continue;
        message.content.forEach((block, index) => {
          if (block.type !== "server_tool_use") return;
          expect(message.content[index + 1]).toMatchObject({
            type: "web_search_tool_result",
            tool_use_id: block["id"],
          });
        });
      }
      await session.recordAssistant({
        content: [...search(turn), { type: "text", text: `Topic ${turn} found.` }],
      });
      await session.commit();
    }
    expect(compacted).toBe(true);
    // The summarizer was shown what the searches were.
    const shown = summarizer.requests.flatMap((request) => request.messages);
    expect(shown.some((message) => message.content.some((block) => block.type === "opaque"))).toBe(true);
    const stored = await session.history();
    expect(
      stored
        .filter((message) => message.role === "assistant")
        .every((message) => message.content.length === 3),
    ).toBe(true);
  });
});
