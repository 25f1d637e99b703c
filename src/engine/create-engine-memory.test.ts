import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CallModel } from "./agent-run.ts";
import { createContextEngine } from "./context-engine.ts";
import { messageText } from "../model/blocks.ts";
import { sequentialIds } from "../model/ids.ts";
import { MemorySessionStore } from "../store/memory/index.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { CORE_MEMORIES_HEADING } from "../memory/core-memory-text.ts";
import { createEngineMemory } from "./create-engine-memory.ts";
import { InMemoryMemoryStore } from "../memory/in-memory-memory-store.ts";
import { preset } from "../governance/presets.ts";

const counter = new FakeTokenCounter();
const clock = () => new Date("2026-03-01T12:00:00Z");
const folder = mkdtempSync(join(tmpdir(), "ctxkit-engine-memory-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe("createEngineMemory", () => {
  it("stores summaries as session-summary memories of their session", async () => {
    const store = new InMemoryMemoryStore({ clock });
    const memory = createEngineMemory({ store, counter, owner: "ada", scope: "project" });
    await memory.remember({
      sessionId: "s1",
      summary: "Migrated the schema to v2.",
      messageIds: ["m1", "m2", "m3"],
    });
    expect(await store.list({ owner: "ada" })).toMatchObject([
      {
        kind: "session-summary",
        scope: "project",
        content: "Migrated the schema to v2.",
        sourceSessionId: "s1",
        metadata: { messageCount: 3, firstMessageId: "m1", lastMessageId: "m3" },
      },
    ]);
    expect(await store.list()).toEqual([]);
  });

  it("leaves a session's own summary out of its core memories and shows it to other sessions", async () => {
    const store = new InMemoryMemoryStore({ clock });
    const memory = createEngineMemory({ store, counter });
    await store.add({ kind: "preference", content: "Keep answers short" });
    await memory.remember({ sessionId: "s1", summary: "Session one fixed the parser", messageIds: ["m1"] });
    const own = await memory.coreMemories("s1", 500);
    const other = await memory.coreMemories("s2", 500);
    expect(own).not.toContain("fixed the parser");
    expect(own).toContain("Keep answers short");
    expect(other).toContain("Session one fixed the parser");
    expect(other).not.toContain(CORE_MEMORIES_HEADING);
    expect(counter.countText(`${CORE_MEMORIES_HEADING}\n${other}`)).toBeLessThanOrEqual(500);
  });

  it("writes daily files, even when summaries are not stored", async () => {
    const dir = join(folder, "daily");
    const store = new InMemoryMemoryStore({ clock });
    const memory = createEngineMemory({
      store,
      counter,
      writeSummaries: false,
      dailyFiles: { dir, timeZone: "utc" },
      clock,
    });
    await memory.remember({ sessionId: "s7", summary: "Trimmed turns 1-10: set up CI.", messageIds: ["a"] });
    expect(await store.list()).toEqual([]);
    expect(readFileSync(join(dir, "memory", "2026-03-01.md"), "utf8")).toBe(
      "# Memory 2026-03-01\n\n## 12:00:00 · session-summary · session s7\n\nTrimmed turns 1-10: set up CI.\n\n",
    );
  });

  it("logs a repeated summary once", async () => {
    const dir = join(folder, "repeat");
    const memory = createEngineMemory({
      store: new InMemoryMemoryStore({ clock }),
      counter,
      dailyFiles: { dir, timeZone: "utc" },
      clock,
    });
    await memory.remember({ sessionId: "s1", summary: "Same outcome.", messageIds: [] });
    await memory.remember({ sessionId: "s1", summary: "same outcome", messageIds: [] });
    const text = readFileSync(join(dir, "memory", "2026-03-01.md"), "utf8");
    expect(text.split("## ").length - 1).toBe(1);
  });
});

/** A scripted model: reads `reads` files, then answers. */
function readingModel(reads: number): CallModel {
  let calls = 0;
  return async (request) => {
    const current = request.messages.slice(
      request.messages.findLastIndex((message) => message.role === "user" && message.kind === undefined),
    );
    const done = current.filter((message) => message.role === "tool").length;
    const usage = { input: request.tokens.total, output: 5 };
    if (done >= reads) return { content: `read ${done} files`, usage };
    return {
      content: [
        { type: "tool-call", id: `call${++calls}`, name: "read_file", input: { path: `f${done}.ts` } },
      ],
      usage,
    };
  };
}

describe("engine with long-term memory", () => {
  it("injects a compacted session's summary into other sessions only", async () => {
    const memoryStore = new InMemoryMemoryStore({ clock });
    const memory = createEngineMemory({ store: memoryStore, counter });
    const engine = await createContextEngine({
      store: new MemorySessionStore(),
      pipeline: preset("default", { offloadMinPrunableTokens: 0, truncateToolResultsAbove: 0 }),
      contextWindow: 16_000,
      maxOutputTokens: 2_000,
      tokenCounter: counter,
      summarizer: new FakeSummarizer(),
      memory,
      coreMemoryTokens: 4_000,
      ids: sequentialIds(),
      clock,
    });
    const executeTool = async () => ({ content: "y".repeat(4_000) });
    for (let turn = 0; turn < 8; turn++) {
      await engine.session("s2").run(`turn ${turn}`, readingModel(4), { executeTool });
    }
    const summaries = await memoryStore.list({ kinds: ["session-summary"] });
    expect(summaries.length).toBeGreaterThan(0);
    expect(summaries.every((summary) => summary.sourceSessionId === "s2")).toBe(true);
    const newest = summaries[0]!.content.trim().split("\n")[0]!;

    const own = engine.session("s2");
    await own.addUser("what did we do?");
    const ownRequest = await own.prepare({ system: "You are a test agent." });
    expect(ownRequest.system).not.toContain("CORE MEMORIES");
    expect(ownRequest.system).not.toContain(newest);
    expect(ownRequest.messages.some((message) => message.kind === "summary")).toBe(true);

    const other = engine.session("s3");
    await other.addUser("what happened in the other session?");
    const otherRequest = await other.prepare({ system: "You are a test agent." });
    expect(otherRequest.system).toContain("# CORE MEMORIES");
    expect(otherRequest.system).toContain(newest);
    expect(otherRequest.system.split("# CORE MEMORIES").length - 1).toBe(1);
    expect(messageText(otherRequest.messages.at(-1)!)).toBe("what happened in the other session?");
  });

  it("Coqui: turns trimmed by maxTurns leave their summary in the session's own history, and a restart does not summarise them again", async () => {
    const sessions = new MemorySessionStore();
    const memoryStore = new InMemoryMemoryStore({ clock });
    const engineWith = (summarizer: FakeSummarizer, firstId: number) =>
      createContextEngine({
        store: sessions,
        pipeline: preset("default", { maxTurns: 4 }),
        contextWindow: 16_000,
        maxOutputTokens: 2_000,
        tokenCounter: counter,
        summarizer,
        memory: createEngineMemory({ store: memoryStore, counter }),
        ids: sequentialIds(firstId),
        clock,
      });
    const answer: CallModel = async (request) => ({
      content: `answer to ${messageText(request.messages.at(-1)!)}`,
    });
    const summarizer = new FakeSummarizer();
    const engine = await engineWith(summarizer, 1);
    for (let turn = 1; turn <= 5; turn++) await engine.session("coqui").run(`question ${turn}`, answer);
    // The fifth turn passed maxTurns: the oldest half of the complete turns (1 and 2) was summarised once.
    expect(summarizer.requests).toHaveLength(1);
    const stored = await sessions.loadMessages("coqui");
    expect(stored.map((message) => message.kind ?? message.role)).toEqual([
      "summary",
      ...Array(3).fill(["user", "assistant"]).flat(),
    ]);
    expect(messageText(stored[0]!)).toContain("question 2");
    const own = engine.session("coqui");
    await own.addUser("question 6");
    const ownRequest = await own.prepare({ system: "You are a test agent." });
    expect(ownRequest.messages[0]!.id).toBe(stored[0]!.id);
    expect(ownRequest.system).not.toContain("question 2"); // in the history, so not in its core memories too

    // A restart loads the summary in place of the trimmed turns: nothing to trim, nothing to summarise.
    const restartedSummarizer = new FakeSummarizer();
    const restarted = await engineWith(restartedSummarizer, 1_000);
    const resumed = restarted.session("coqui");
    await resumed.addUser("question 6");
    const request = await resumed.prepare({ system: "You are a test agent." });
    expect(restartedSummarizer.requests).toHaveLength(0);
    expect(request.messages.map((message) => messageText(message))).toEqual(
      ownRequest.messages.map((message) => messageText(message)),
    );
  });

  it("holds the core-memories section to its budget without the assembler cutting it", async () => {
    const memoryStore = new InMemoryMemoryStore({ clock });
    for (let index = 0; index < 200; index++) {
      await memoryStore.add({
        kind: index % 2 === 0 ? "fact" : "session-summary",
        content: `Memory ${index}: ${"something worth remembering ".repeat(3)}`,
        sourceSessionId: `old-${index}`,
      });
    }
    const engine = await createContextEngine({
      store: new MemorySessionStore(),
      contextWindow: 16_000,
      maxOutputTokens: 2_000,
      tokenCounter: counter,
      summarizer: new FakeSummarizer(),
      memory: createEngineMemory({ store: memoryStore, counter }),
      coreMemoryTokens: 150,
      ids: sequentialIds(),
      clock,
    });
    const session = engine.session("fresh");
    await session.addUser("hello");
    const request = await session.prepare({ system: "You are a test agent." });
    const section = request.inspection.channels.system.find((rendered) => rendered.name === "core-memories")!;
    expect(section.tokens).toBeLessThanOrEqual(150);
    expect(section.tokens).toBeGreaterThan(100);
    expect(section.truncated).toBe(false);
    expect(request.system).toContain("## Facts");
  });
});
