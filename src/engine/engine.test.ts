import { describe, expect, it } from "vitest";
import { messageText } from "../model/blocks.ts";
import { sequentialIds } from "../model/ids.ts";
import { MemorySessionStore } from "../store/memory/index.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { createContextEngine } from "./context-engine.ts";
import type { CallModel } from "./agent-run.ts";
import type { GovernancePipeline } from "../governance/pipeline.ts";
import type { PresetOptionsInput } from "../governance/preset-options.ts";
import { preset } from "../governance/presets.ts";

const clock = () => new Date("2026-03-01T12:00:00Z");

async function engineOver(store: MemorySessionStore, knobs: PresetOptionsInput = {}) {
  return createContextEngine({
    store,
    pipeline: preset("default", knobs),
    contextWindow: 16_000,
    maxOutputTokens: 2_000,
    tokenCounter: new FakeTokenCounter(),
    summarizer: new FakeSummarizer(),
    ids: sequentialIds(),
    clock,
  });
}

/** A scripted model: reads `reads` files, then answers. */
function readingModel(reads: number): CallModel {
  return async (request) => {
    const done = request.messages.filter((message) => message.role === "tool").length;
    const calls = request.messages
      .flatMap((message) => message.content)
      .filter((block) => block.type === "tool-call").length;
    if (calls - done > 0) throw new Error("the model saw an unanswered call");
    const sinceInstruction = request.messages.slice(
      request.messages.findLastIndex((message) => message.role === "user" && message.kind === undefined),
    );
    const readsThisTurn = sinceInstruction.filter((message) => message.role === "tool").length;
    if (readsThisTurn >= reads)
      return { content: `read ${readsThisTurn} files`, usage: { input: request.tokens.total, output: 5 } };
    return {
      content: [
        {
          type: "tool-call",
          id: `c${Math.random().toString(36).slice(2)}`,
          name: "read_file",
          input: { path: `f${readsThisTurn}.ts` },
        },
      ],
      usage: { input: request.tokens.total, output: 5 },
    };
  };
}

describe("ContextEngine", () => {
  it("runs turns end to end, persists each committed turn, and leaves no trace of a failed one", async () => {
    const store = new MemorySessionStore();
    const engine = await engineOver(store);
    const session = engine.session("s1");
    expect(await store.getSession("s1")).toBeUndefined(); // lazy: nothing before the first turn
    const result = await session.run("read three files", readingModel(3), {
      system: "You are a test agent.",
      executeTool: async (call) => ({
        content: `contents of ${JSON.stringify(call.input)}\n${"x".repeat(500)}`,
      }),
    });
    expect(result.stoppedBy).toBe("answer");
    expect(messageText(result.reply!)).toBe("read 3 files");
    const stored = await store.loadMessages("s1");
    expect(stored.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "tool",
      "assistant",
      "tool",
      "assistant",
    ]);
    await expect(
      session.run("this one fails", async () => {
        throw new Error("model down");
      }),
    ).rejects.toThrow("model down");
    expect(await store.loadMessages("s1")).toHaveLength(8);
    expect((await session.history()).length).toBe(8);
    expect(await session.historyLength()).toBe(8);
  });

  it("compacts long runs, persists the summary, and a restarted engine continues from it", async () => {
    const store = new MemorySessionStore();
    const noOffload = { offloadMinPrunableTokens: 0, truncateToolResultsAbove: 0 };
    const first = await engineOver(store, noOffload);
    const executeTool = async () => ({ content: "y".repeat(4_000) });
    for (let turn = 0; turn < 8; turn++) {
      await first.session("s2").run(`turn ${turn}`, readingModel(4), { executeTool });
    }
    const rows = await store.loadMessages("s2", { strategy: "all" });
    const visible = await store.loadMessages("s2");
    expect(visible.some((message) => message.kind === "summary")).toBe(true);
    expect(visible.length).toBeLessThan(rows.length);
    // A new engine over the same store: the session continues with the summary and the recent turns.
    const second = await engineOver(store, noOffload);
    const resumed = second.session("s2");
    const request = await (async () => {
      await resumed.addUser("what did we do?");
      return resumed.prepare();
    })();
    expect(request.messages.some((message) => message.kind === "summary")).toBe(true);
    expect(messageText(request.messages.at(-1)!)).toBe("what did we do?");
    expect(request.tokens.total + request.tokens.reservedOutput).toBeLessThanOrEqual(16_000);
  });

  it("keeps the persisted summary in the view after an interrupted turn", async () => {
    const store = new MemorySessionStore();
    const noOffload = { offloadMinPrunableTokens: 0, truncateToolResultsAbove: 0 };
    const engine = await engineOver(store, noOffload);
    const session = engine.session("s4");
    const executeTool = async () => ({ content: "y".repeat(4_000) });
    for (let turn = 0; turn < 8; turn++) await session.run(`turn ${turn}`, readingModel(4), { executeTool });
    const stored = (await store.loadMessages("s4")).filter((message) => message.kind === "summary");
    expect(stored.length).toBeGreaterThan(0);
    await session.addUser("a question the user takes back");
    await session.prepare(); // the request was sent; the user interrupts while it streams
    await session.recordAssistant({
      content: [{ type: "tool-call", id: "late", name: "read_file", input: {} }],
    });
    expect(await session.interrupt()).toHaveLength(2);
    await session.addUser("the real question");
    const request = await session.prepare();
    // The stored summaries themselves, not a new compaction of the originals (which would rewrite the cached prefix).
    expect(request.messages.filter((message) => message.kind === "summary").map((m) => m.id)).toEqual(
      stored.map((summary) => summary.id),
    );
    expect(request.events.map((event) => event.type)).not.toContain("compaction-end");
    expect(
      request.messages.some((message) => messageText(message) === "a question the user takes back"),
    ).toBe(false);
    expect(messageText(request.messages.at(-1)!)).toBe("the real question");
  });

  it("prices checkpoints with the cache prices of the model's provider unless given a pipeline", async () => {
    const store = new MemorySessionStore();
    const counter = new FakeTokenCounter();
    const pricingOf = async (model: string, pipeline?: GovernancePipeline) =>
      (
        await createContextEngine({
          store,
          model,
          tokenCounter: counter,
          ...(pipeline !== undefined && { pipeline }),
        })
      ).settings.pipeline.settings.pricing;
    expect(await pricingOf("gpt-4.1")).toBe("openai");
    expect(await pricingOf("claude-sonnet-4-5")).toBe("anthropic");
    expect(await pricingOf("gemini-2.5-pro")).toBe("gemini");
    expect(await pricingOf("ollama:llama3.1:8b")).toBe("anthropic");
    expect(await pricingOf("gpt-4.1", preset("default", { pricing: "none" }))).toBe("none");
    expect(await pricingOf("gpt-4.1", preset("aggressive"))).toBe("anthropic");
    expect(
      (await createContextEngine({ store, tokenCounter: counter })).settings.pipeline.settings.pricing,
    ).toBe("anthropic");
  });

  it("anchors the next request on the usage the provider reported for the previous one", async () => {
    const engine = await engineOver(new MemorySessionStore());
    const session = engine.session("anchored");
    await session.addUser("what is in the repository?");
    const first = await session.prepare({ system: "You are a test agent." });
    expect(first.tokens.anchoredTotal).toBeUndefined();
    await session.recordAssistant({
      content: "two folders",
      usage: { input: first.tokens.total * 4, output: 3 },
    });
    await session.addUser("and in src?");
    const second = await session.prepare({ system: "You are a test agent." });
    const growth = second.tokens.total - first.tokens.total;
    // The provider counted 4× more than the local counter: the change since is scaled by at most 2.
    expect(second.tokens.anchoredTotal).toBe(first.tokens.total * 4 + growth * 2);
  });

  it("interrupt removes the open turn; clear hides everything behind one marker", async () => {
    const store = new MemorySessionStore();
    const engine = await engineOver(store);
    const session = engine.session("s3");
    await session.addUser("first");
    await session.recordAssistant({ content: "one" });
    await session.commit();
    await session.addUser("second");
    await session.recordAssistant({ content: [{ type: "tool-call", id: "t1", name: "bash", input: {} }] });
    const removed = await session.interrupt();
    expect(removed.map((message) => message.role)).toEqual(["user", "assistant"]);
    expect((await session.history()).map((message) => messageText(message))).toEqual(["first", "one"]);
    await session.clear();
    const view = await store.loadMessages("s3");
    expect(view).toHaveLength(1);
    expect(messageText(view[0]!)).toMatch(/Context cleared/);
    expect(await store.loadMessages("s3", { strategy: "all" })).toHaveLength(3);
  });

  it("offers and runs recall_tool_output, so the model can read back an output governance offloaded", async () => {
    const engine = await createContextEngine({
      store: new MemorySessionStore(),
      contextWindow: 40_000,
      maxOutputTokens: 4_000,
      tokenCounter: new FakeTokenCounter(),
    });
    const session = engine.session("offloads");
    const listing = (step: number) =>
      Array.from(
        { length: 400 },
        (_, line) => `src/file${step}_${line}.ts:${line}: const v${line} = ${line};`,
      ).join("\n");
    let step = 0;
    let recalled: string | undefined;
    const offered = new Set<string>();
    await session.run(
      "Audit the repository",
      async (request) => {
        step++;
        for (const tool of request.tools) offered.add(tool.name);
        const text = JSON.stringify(request.messages);
        const ref = /recall_tool_output\(\\"(blob:[0-9a-f]+)/.exec(text)?.[1];
        const result = request.messages.at(-1)?.content.find((block) => block.type === "tool-result");
        if (result?.type === "tool-result" && result.toolName === "recall_tool_output") {
          recalled = typeof result.content === "string" ? result.content : JSON.stringify(result.content);
          return { content: "done" };
        }
        if (ref !== undefined) {
          return {
            content: [
              { type: "tool-call", id: `recall-${step}`, name: "recall_tool_output", input: { ref } },
            ],
          };
        }
        if (step > 15) return { content: "gave up" };
        return { content: [{ type: "tool-call", id: `grep-${step}`, name: "grep", input: { step } }] };
      },
      {
        maxSteps: 20,
        tools: [{ name: "grep", inputSchema: { type: "object" } }],
        executeTool: async (call) => ({ content: listing(Number((call.input as { step: number }).step)) }),
      },
    );
    expect(offered.has("recall_tool_output")).toBe(true);
    expect(recalled).toMatch(/^\[characters 0–\d+ of \d+/);
    expect(recalled).toMatch(/src\/file\d+_0\.ts:0: const v0 = 0;/);
  });

  it("tries a load that failed again on the next call", async () => {
    let failures = 1;
    const store = new (class extends MemorySessionStore {
      override async getSession(id: string) {
        if (failures-- > 0) throw new Error("the database is busy");
        return super.getSession(id);
      }
    })();
    const engine = await engineOver(store);
    const session = engine.session("flaky");
    await expect(session.history()).rejects.toThrow("busy");
    await session.addUser("after the hiccup");
    await session.commit();
    expect((await store.loadMessages("flaky")).map((message) => messageText(message))).toEqual([
      "after the hiccup",
    ]);
  });

  it("clear hides the whole stored history, also when only the recent turns were loaded", async () => {
    const store = new MemorySessionStore();
    const first = await engineOver(store);
    const session = first.session("long");
    for (let index = 0; index < 8; index++) {
      await session.addUser(`question ${index}`);
      await session.recordAssistant({ content: `answer ${index}` });
      await session.commit();
    }
    const recent = await createContextEngine({
      store,
      contextWindow: 16_000,
      tokenCounter: new FakeTokenCounter(),
      restore: "recent",
    });
    const reopened = recent.session("long");
    expect((await reopened.history()).length).toBeLessThan(16);
    await reopened.clear();
    const view = await store.loadMessages("long");
    expect(view.map((message) => messageText(message))).toEqual([expect.stringMatching(/Context cleared/)]);
    expect(await store.loadMessages("long", { strategy: "all" })).toHaveLength(17);
  });

  it("with an owner, opens only that owner's sessions (or ownerless ones) and never writes into a replaced one", async () => {
    const store = new MemorySessionStore();
    const turn = (text: string) => [{ role: "user" as const, content: [{ type: "text" as const, text }] }];
    await store.appendTurn("theirs", turn("bob's"), { session: { owner: "bob" } });
    await store.appendTurn("ownerless", turn("the CLI's"));
    const engine = await createContextEngine({
      store,
      contextWindow: 16_000,
      tokenCounter: new FakeTokenCounter(),
      session: { owner: "ada" },
    });
    await expect(engine.session("theirs").history()).rejects.toMatchObject({ code: "not_found" });
    expect((await engine.session("ownerless").history()).map((message) => messageText(message))).toEqual([
      "the CLI's",
    ]);
    // A session loaded as ada's, deleted and made again by bob at the same seq before ada's turn is committed.
    const mine = engine.session("mine");
    await mine.addUser("ada's first");
    await mine.commit();
    await mine.addUser("ada's second");
    await store.deleteSession("mine");
    await store.appendTurn("mine", turn("bob's first"), { session: { owner: "bob" } });
    await expect(mine.commit()).rejects.toMatchObject({ code: "concurrent_write" });
    const stored = await store.loadMessages("mine");
    expect(stored.map((message) => messageText(message))).toEqual(["bob's first"]);
    // Clearing writes through the same check.
    const cleared = engine.session("cleared");
    await cleared.addUser("ada's only");
    await cleared.commit();
    await store.deleteSession("cleared");
    await store.appendTurn("cleared", turn("bob's only"), { session: { owner: "bob" } });
    await expect(cleared.clear()).rejects.toMatchObject({ code: "concurrent_write" });
    expect((await store.loadMessages("cleared")).map((message) => messageText(message))).toEqual([
      "bob's only",
    ]);
  });

  it("refuses tool results nothing asked for, and a second result for one call, recording nothing of the batch", async () => {
    const store = new MemorySessionStore();
    const session = (await engineOver(store)).session("results");
    await session.addUser("list the files");
    await session.recordAssistant({
      content: [
        { type: "tool-call", id: "c1", name: "ls", input: {} },
        { type: "tool-call", id: "c2", name: "ls", input: { path: "src" } },
      ],
    });
    const length = await session.historyLength();
    await expect(
      session.recordToolResults([
        { callId: "c1", toolName: "ls", content: "a.ts" },
        { callId: "nope", toolName: "ls", content: "?" },
      ]),
    ).rejects.toMatchObject({ code: "not_found", message: expect.stringContaining('"nope"') });
    await expect(
      session.recordToolResults([
        { callId: "c1", toolName: "ls", content: "a.ts" },
        { callId: "c1", toolName: "ls", content: "again" },
      ]),
    ).rejects.toMatchObject({ code: "invalid_input", message: expect.stringContaining('"c1"') });
    expect(await session.historyLength()).toBe(length);
    await session.recordToolResults([{ callId: "c1", toolName: "ls", content: "a.ts" }]);
    await expect(session.record([{ callId: "c1", toolName: "ls", content: "again" }])).rejects.toMatchObject({
      code: "invalid_input",
    });
    await session.recordToolResults([{ callId: "c2", toolName: "ls", content: "src/b.ts" }]);
    await session.recordAssistant({ content: "a.ts and src/b.ts" });
    await session.commit();
    expect((await store.loadMessages("results")).map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "tool",
      "assistant",
    ]);
  });

  it("refuses an empty user message; an empty reply is stored and left out of Anthropic and Gemini requests", async () => {
    const session = (await engineOver(new MemorySessionStore())).session("empty");
    for (const content of ["", "  \n", [], [{ type: "text" as const, text: "" }]]) {
      await expect(session.addUser(content)).rejects.toMatchObject({ code: "invalid_input" });
    }
    expect(await session.historyLength()).toBe(0);
    await session.addUser("hi");
    await session.recordAssistant({ content: "" });
    await session.commit();
    await session.addUser("hello");
    const request = await session.prepare();
    expect(request.toAnthropic().messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "hi" },
          { type: "text", text: "hello" },
        ],
      },
    ]);
    expect(request.toGemini().contents).toEqual([
      { role: "user", parts: [{ text: "hi" }, { text: "hello" }] },
    ]);
  });
});
