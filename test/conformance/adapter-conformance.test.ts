import { describe, expect, it } from "vitest";
import { createContextEngine } from "../../src/engine/context-engine.ts";
import { MemorySessionStore } from "../../src/store/memory/index.ts";
import type { SessionStore } from "../../src/store/session-store.ts";
import { FakeSummarizer } from "../../src/test/fake-summarizer.ts";
import { FakeTokenCounter } from "../../src/test/fake-token-counter.ts";
import { adapters, type ConformanceAdapter } from "./adapters.ts";
import { overflowError, ScriptedModel } from "./scripted-model.ts";

/** A small window: the files the questions read add up past it, so governance offloads and compacts. */
function engineOver(store: SessionStore) {
  return createContextEngine({
    store,
    contextWindow: 12_000,
    maxOutputTokens: 1_000,
    tokenCounter: new FakeTokenCounter(),
    summarizer: new FakeSummarizer(),
  });
}

const questions = Array.from({ length: 6 }, (_, index) =>
  `Question ${index + 1} ${"why ".repeat(index)}`.trim(),
);

/** Asks `questions` in session `s`, in a new process (a new engine over the same store) at each of `restarts`. */
async function conversation(adapter: ConformanceAdapter, restarts: readonly number[] = []) {
  const store = new MemorySessionStore();
  const model = new ScriptedModel();
  const kept = new Map<string, unknown>();
  let open = adapter.open(await engineOver(store), model, kept);
  for (const [index, question] of questions.entries()) {
    if (restarts.includes(index)) open = adapter.open(await engineOver(store), model, kept);
    await open.ask("s", question);
  }
  return { store, model };
}

describe.each(adapters)("adapter conformance: $name", (adapter) => {
  it("sends byte-identical requests at every turn across a process restart", async () => {
    const straight = await conversation(adapter);
    const restarted = await conversation(adapter, [2, 4]);
    expect(straight.model.requests.length).toBeGreaterThanOrEqual(questions.length * 2);
    expect(restarted.model.requests.map((request) => request.wire)).toEqual(
      straight.model.requests.map((request) => request.wire),
    );
  });

  it("offers recall_tool_output with every request whose offload notices name it", async () => {
    const { model } = await conversation(adapter);
    const noticed = model.requests.filter((request) => request.wire.includes("recall_tool_output("));
    expect(noticed.length).toBeGreaterThan(0);
    // LangChain's fake model is not told the tools: the agent's tool list shows there (see its own test).
    if (adapter.name.startsWith("LangChain")) return;
    for (const request of noticed) expect(request.tools).toContain("recall_tool_output");
  });

  it("recovers from a provider overflow and sends the request again, once", async () => {
    const store = new MemorySessionStore();
    const model = new ScriptedModel();
    const open = adapter.open(await engineOver(store), model, new Map());
    await open.ask("s", questions[0]!);
    await open.ask("s", questions[1]!);
    const before = model.requests.length;
    model.failures.set(before, overflowError());
    expect(await open.ask("s", questions[2]!)).toBe(`Answered: ${questions[2]}`);
    // The refused request, its one retry, then the step after the tool call.
    expect(model.requests.length - before).toBe(3);
    expect(model.requests[before + 1]!.question).toBe(questions[2]);
    // The turn is stored once, with its reply.
    const stored = (await store.loadMessages("s", { strategy: "all" })).map((message) => message.content);
    expect(stored.filter((content) => JSON.stringify(content).includes(questions[2]!))).toHaveLength(2);
  });

  it("stores nothing of a turn whose model call failed", async () => {
    const store = new MemorySessionStore();
    const model = new ScriptedModel();
    const open = adapter.open(await engineOver(store), model, new Map());
    await open.ask("s", questions[0]!);
    const stored = await store.loadMessages("s", { strategy: "all" });
    model.failures.set(model.requests.length, new Error("503 overloaded"));
    await expect(open.ask("s", questions[1]!)).rejects.toThrow("503");
    expect(await store.loadMessages("s", { strategy: "all" })).toEqual(stored);
  });

  it("records the replies with the model's provider", async () => {
    const { store } = await conversation(adapter);
    const replies = (await store.loadMessages("s", { strategy: "all" })).filter(
      (message) => message.role === "assistant",
    );
    expect(replies.length).toBe(questions.length * 2);
    expect(new Set(replies.map((message) => message.provider))).toEqual(new Set([adapter.provider]));
  });

  it("never lets interleaved conversations share a view", async () => {
    const model = new ScriptedModel();
    const open = adapter.open(await engineOver(new MemorySessionStore()), model, new Map());
    await open.ask("a", "Alpha question");
    await open.ask("b", "Bravo question");
    await open.ask("a", "Alpha again");
    await open.ask("b", "Bravo again");
    for (const request of model.of("a")) expect(request.wire).not.toContain("Bravo");
    for (const request of model.of("b")) expect(request.wire).not.toContain("Alpha");
    expect(model.of("a").at(-1)!.wire).toContain("Alpha question");
    expect(model.of("b").at(-1)!.wire).toContain("Bravo question");
  });
});
