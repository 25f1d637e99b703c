import { describe, expect, it, onTestFinished } from "vitest";
import type { Message } from "../../src/model/message.ts";
import { MemorySessionStore } from "../../src/store/memory/index.ts";
import type { SessionStore } from "../../src/store/session-store.ts";
import { adapters, type ConformanceAdapter, type OpenAdapter } from "./adapters.ts";
import { overflowError, ScriptedModel } from "./scripted-model.ts";

const questions = Array.from({ length: 6 }, (_, index) =>
  `Question ${index + 1} ${"why ".repeat(index)}`.trim(),
);

/** Every message the process holds of `session`: the store's, or a memory-backed adapter's own. */
function storedOf(
  adapter: ConformanceAdapter,
  open: OpenAdapter,
  store: SessionStore,
  session: string,
): Promise<readonly Message[]> {
  return open.stored !== undefined
    ? open.stored(session)
    : store.loadMessages(adapter.storeId(session), { strategy: "all" });
}

/** Asks `questions` in session `s`, in a new process (a new engine over the same store) at each of `restarts`. */
async function conversation(adapter: ConformanceAdapter, restarts: readonly number[] = []) {
  const store = new MemorySessionStore();
  const model = new ScriptedModel();
  const kept = new Map<string, unknown>();
  let open = await adapter.open(store, model, kept);
  let stored: readonly Message[];
  try {
    for (const [index, question] of questions.entries()) {
      if (restarts.includes(index)) {
        await open.close?.();
        open = await adapter.open(store, model, kept);
      }
      await open.ask("s", question);
    }
    stored = await storedOf(adapter, open, store, "s");
  } finally {
    await open.close?.();
  }
  return { store, model, stored };
}

describe.each(adapters)("adapter conformance: $name", (adapter) => {
  it("sends byte-identical requests at every turn across a process restart", async () => {
    const straight = await conversation(adapter);
    const restarted = await conversation(adapter, [2, 4]);
    if (adapter.inapplicable?.restart !== undefined) {
      // Nothing outlives the process: the nearest is that governance is deterministic, and that a restarted
      // process (the application sending its kept messages) still sends every turn's question, in order.
      const again = await conversation(adapter);
      expect(again.model.requests.map((request) => request.wire)).toEqual(
        straight.model.requests.map((request) => request.wire),
      );
      expect(restarted.model.requests.map((request) => request.question)).toEqual(
        straight.model.requests.map((request) => request.question),
      );
      return;
    }
    expect(straight.model.requests.length).toBeGreaterThanOrEqual(questions.length * 2);
    expect(restarted.model.requests.map((request) => request.wire)).toEqual(
      straight.model.requests.map((request) => request.wire),
    );
  });

  it("offers recall_tool_output with every request whose offload notices name it, else they name no tool", async () => {
    const { model } = await conversation(adapter);
    expect(model.requests.some((request) => request.wire.includes("[output offloaded"))).toBe(true);
    const noticed = model.requests.filter((request) => request.wire.includes("recall_tool_output("));
    if (!adapter.recall) {
      expect(noticed).toEqual([]);
      return;
    }
    expect(noticed.length).toBeGreaterThan(0);
    // LangChain's fake model is not told the tools: the agent's tool list shows there (see its own test).
    if (adapter.name.startsWith("LangChain")) return;
    for (const request of noticed) expect(request.tools).toContain("recall_tool_output");
  });

  it("recovers from a provider overflow and sends the request again, once", async () => {
    const store = new MemorySessionStore();
    const model = new ScriptedModel();
    const open = await adapter.open(store, model, new Map());
    onTestFinished(() => open.close?.());
    await open.ask("s", questions[0]!);
    await open.ask("s", questions[1]!);
    const before = model.requests.length;
    model.failures.set(before, overflowError());
    if (adapter.inapplicable?.overflow !== undefined) {
      // The framework makes the model call: the nearest is that the overflow reaches the caller unretried, that
      // nothing of the turn is kept, and that the question asked again is sent once.
      const kept = await storedOf(adapter, open, store, "s");
      await expect(open.ask("s", questions[2]!)).rejects.toThrow(/maximum context length/);
      expect(model.requests.length - before).toBe(1);
      expect(await storedOf(adapter, open, store, "s")).toEqual(kept);
      expect(await open.ask("s", questions[2]!)).toBe(`Answered: ${questions[2]}`);
      const retried = model.requests.at(-2)!.wire;
      expect(retried.split(questions[2]!).length - 1).toBe(1);
      return;
    }
    expect(await open.ask("s", questions[2]!)).toBe(`Answered: ${questions[2]}`);
    // The refused request, its one retry, then the step after the tool call.
    expect(model.requests.length - before).toBe(3);
    expect(model.requests[before + 1]!.question).toBe(questions[2]);
    // The turn is stored once, with its reply.
    const stored = (await storedOf(adapter, open, store, "s")).map((message) => message.content);
    expect(stored.filter((content) => JSON.stringify(content).includes(questions[2]!))).toHaveLength(2);
  });

  it("stores nothing of a turn whose model call failed", async () => {
    const store = new MemorySessionStore();
    const model = new ScriptedModel();
    const open = await adapter.open(store, model, new Map());
    onTestFinished(() => open.close?.());
    await open.ask("s", questions[0]!);
    const stored = await storedOf(adapter, open, store, "s");
    model.failures.set(model.requests.length, new Error("503 overloaded"));
    await expect(open.ask("s", questions[1]!)).rejects.toThrow(/503/);
    expect(await storedOf(adapter, open, store, "s")).toEqual(stored);
  });

  it("records the replies with the model's provider", async () => {
    const { stored } = await conversation(adapter);
    const replies = stored.filter((message) => message.role === "assistant" && message.kind === undefined);
    expect(replies.length).toBe(questions.length * 2);
    const provider = adapter.inapplicable?.provider === undefined ? adapter.provider : undefined;
    expect(new Set(replies.map((message) => message.provider))).toEqual(new Set([provider]));
  });

  it("never lets interleaved conversations share a view", async () => {
    const model = new ScriptedModel();
    const open = await adapter.open(new MemorySessionStore(), model, new Map());
    onTestFinished(() => open.close?.());
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
