import { describe, expect, it } from "vitest";
import type { CallModel } from "./agent-run.ts";
import { createContextEngine } from "./context-engine.ts";
import type { PreparedRequest } from "./prepared-request.ts";
import { messageText, toolResultText, toolResultsOf } from "../model/blocks.ts";
import { sequentialIds } from "../model/ids.ts";
import type { JsonValue } from "../model/message.ts";
import { MemorySessionStore } from "../store/memory/index.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { createEngineMemory } from "./create-engine-memory.ts";
import { InMemoryMemoryStore } from "../memory/in-memory-memory-store.ts";
import { MEMORY_SEARCH_TOOL_NAME, createMemorySearchTool } from "./memory-search-tool.ts";

const clock = () => new Date("2026-03-01T12:00:00Z");
const counter = new FakeTokenCounter();

/** A scripted model: one answer (or error) per call, recording each request. */
function scripted(steps: readonly (JsonValue | Error | ((request: PreparedRequest) => JsonValue))[]) {
  const requests: PreparedRequest[] = [];
  const callModel: CallModel = async (request) => {
    requests.push(request);
    const step = steps[requests.length - 1];
    if (step instanceof Error) throw step;
    const value = typeof step === "function" ? step(request) : step;
    if (typeof value === "string") return { content: value };
    return {
      content: [
        {
          type: "tool-call",
          id: `call_${requests.length}`,
          name: MEMORY_SEARCH_TOOL_NAME,
          input: value ?? {},
        },
      ],
    };
  };
  return { callModel, requests };
}

const overflow = () =>
  Object.assign(new Error("prompt is too long: 210000 tokens > 200000 maximum"), { status: 400 });

describe("search_memory", () => {
  it("the CowAgent seed: after the context was cleared, the agent finds what was said through memory search", async () => {
    const memoryStore = new InMemoryMemoryStore({ clock });
    const engine = await createContextEngine({
      store: new MemorySessionStore(),
      contextWindow: 1_000_000,
      tokenCounter: counter,
      summarizer: new FakeSummarizer(),
      memory: createEngineMemory({ store: memoryStore, counter }),
      ids: sequentialIds(),
      clock,
    });
    const session = engine.session("cow");
    await session.run("our deploy target is the eu-west cluster", scripted(["noted"]).callModel);
    await session.run("and the database is postgres 16", scripted(["noted"]).callModel);
    // The provider refuses twice: the context is summarised to memory and trimmed, then cleared.
    const cleared = await session.run("deploy it", scripted([overflow(), overflow(), "deploying"]).callModel);
    expect(cleared.recoveries).toEqual(["trimmed", "cleared"]);

    const model = scripted([
      { query: "deploy target cluster" },
      (request) => `found: ${toolResultText(toolResultsOf(request.messages.at(-1)!)[0]!.content)}`,
    ]);
    const result = await session.run("which cluster was it again?", model.callModel);
    expect(model.requests[0]!.tools.map((tool) => tool.name)).toContain(MEMORY_SEARCH_TOOL_NAME);
    // The model no longer sees the early turns, only the search finds them.
    expect(model.requests[0]!.messages.map(messageText).join("\n")).not.toContain("eu-west");
    const [found] = toolResultsOf(model.requests[1]!.messages.at(-1)!);
    expect(found?.isError).toBeUndefined();
    expect(toolResultText(found!.content)).toMatch(
      /^1 memory matches "deploy target cluster":\n- session-summary, 2026-03-01: /,
    );
    expect(toolResultText(found!.content)).toContain("our deploy target is the eu-west cluster");
    expect(messageText(result.reply!)).toContain("eu-west");
  });

  it("answers bad arguments with an error result the model can correct, and says when nothing matches", async () => {
    const memoryStore = new InMemoryMemoryStore({ clock });
    await memoryStore.add({ kind: "preference", content: "Prefers metric units" });
    const engine = await createContextEngine({
      store: new MemorySessionStore(),
      contextWindow: 100_000,
      tokenCounter: counter,
      summarizer: new FakeSummarizer(),
      memory: createEngineMemory({ store: memoryStore, counter }),
      ids: sequentialIds(),
      clock,
    });
    const model = scripted([{ limit: 3 }, { query: "imperial" }, { query: "units" }, "ok"]);
    await engine.session("s").run("what units?", model.callModel);
    const results = model.requests.slice(1).map((request) => toolResultsOf(request.messages.at(-1)!)[0]!);
    expect(results[0]).toMatchObject({
      isError: true,
      content: expect.stringMatching(/search_memory arguments/) as string,
    });
    expect(results[1]?.content).toBe('no memories match "imperial"');
    expect(results[2]?.content).toBe(
      '1 memory matches "units":\n- preference, 2026-03-01: Prefers metric units',
    );
  });

  it("searches only its owner's memories and clips long ones", async () => {
    const store = new InMemoryMemoryStore({ clock });
    await store.add({ owner: "acme", kind: "note", content: `release notes ${"r".repeat(5_000)}` });
    await store.add({ owner: "globex", kind: "note", content: "globex release plan" });
    const text = await createMemorySearchTool({ store, owner: "acme" }).execute({ query: "release" });
    expect(text).not.toContain("globex");
    expect(text.endsWith(" […]")).toBe(true);
    expect(text.length).toBeLessThan(2_100);
  });
});
