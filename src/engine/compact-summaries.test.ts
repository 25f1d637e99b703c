import { describe, expect, it } from "vitest";
import { NotFoundError } from "../errors/errors.ts";
import { toolResultText, toolResultsOf } from "../model/blocks.ts";
import { sequentialIds } from "../model/ids.ts";
import { MemorySessionStore } from "../store/memory/index.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { createContextEngine } from "./context-engine.ts";
import type { EngineSession } from "./engine-session.ts";
import { preset } from "../governance/presets.ts";

const grepOutput = (word: string) =>
  Array.from({ length: 400 }, (_, line) => `src/file${line}.ts:${line}: // ${word} tidy this up`).join("\n");

/** One turn of the seed's shape: the user asks, the model greps, the tool answers, the model replies. */
async function grepTurn(session: EngineSession, question: string, callId: string, word: string) {
  await session.addUser(question);
  await session.prepare();
  await session.recordAssistant({
    content: [{ type: "tool-call", id: callId, name: "grep", input: { pattern: word } }],
  });
  await session.recordToolResults([{ callId, toolName: "grep", content: grepOutput(word) }]);
}

describe("EngineSession.attachCompactSummary (the LLMSession seed's compact_summary)", () => {
  it("attaches summaries to results already recorded, stores them, and sends them once the results are older", async () => {
    const store = new MemorySessionStore();
    const engine = await createContextEngine({
      store,
      contextWindow: 200_000,
      tokenCounter: new FakeTokenCounter(),
      summarizer: new FakeSummarizer(),
      pipeline: preset("default", { cacheAware: false }),
      ids: sequentialIds(),
      clock: () => new Date("2026-03-01T12:00:00Z"),
    });
    const session = engine.session("llm");
    await grepTurn(session, "find the TODOs", "c1", "TODO");
    // Computed after the result was recorded, while the turn is still open.
    await session.attachCompactSummary("c1", "400 TODOs, one per file in src/");
    const newest = await session.prepare();
    expect(toolResultText(toolResultsOf(newest.messages.at(-1)!)[0]!.content)).toBe(grepOutput("TODO"));
    await session.recordAssistant({ content: "There are 400 TODOs." });
    await session.commit();
    const [stored] = (await store.loadMessages("llm")).filter((message) => message.role === "tool");
    expect(toolResultsOf(stored!)[0]?.compactSummary).toBe("400 TODOs, one per file in src/");

    await grepTurn(session, "and the FIXMEs?", "c2", "FIXME");
    await session.prepare(); // the model reads the result (now in the governed view) and answers
    await session.recordAssistant({ content: "400 FIXMEs." });
    await session.commit();
    // After the turn was committed: the stored row is updated.
    const updated = await session.attachCompactSummary("c2", "400 FIXMEs, next to the TODOs");
    expect(toolResultsOf(updated)[0]?.compactSummary).toBe("400 FIXMEs, next to the TODOs");
    const rows = (await store.loadMessages("llm")).filter((message) => message.role === "tool");
    expect(rows.map((row) => toolResultsOf(row)[0]?.compactSummary)).toEqual([
      "400 TODOs, one per file in src/",
      "400 FIXMEs, next to the TODOs",
    ]);

    // Both results are now older than the newest step: the next checkpoint sends their summaries.
    await grepTurn(session, "and the XXXs?", "c3", "XXX");
    const request = await session.prepare();
    expect(request.checkpoint).toBe(true);
    const sent = (messages: typeof request.messages) =>
      messages
        .filter((message) => message.role === "tool")
        .map((message) => toolResultText(toolResultsOf(message)[0]!.content));
    expect(sent(request.messages)).toEqual([
      "400 TODOs, one per file in src/",
      "400 FIXMEs, next to the TODOs",
      grepOutput("XXX"),
    ]);
    expect((await session.history()).filter((message) => message.role === "tool").slice(0, 2)).toEqual(rows);

    // A restarted engine reads them from the store.
    const restarted = await createContextEngine({
      store,
      contextWindow: 200_000,
      tokenCounter: new FakeTokenCounter(),
      summarizer: new FakeSummarizer(),
      ids: sequentialIds(1_000),
    });
    const resumed = restarted.session("llm");
    await resumed.addUser("which one first?");
    expect(sent((await resumed.prepare()).messages)).toEqual([
      "400 TODOs, one per file in src/",
      "400 FIXMEs, next to the TODOs",
    ]);

    await expect(session.attachCompactSummary("c9", "nothing")).rejects.toBeInstanceOf(NotFoundError);
  });
});
