import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sequentialIds } from "../model/ids.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { CoreMemoryBuilder } from "./core-memory.ts";
import { CORE_MEMORIES_HEADING } from "./core-memory-text.ts";
import { InMemoryMemoryStore } from "./in-memory-memory-store.ts";
import type { MemoryKind } from "./memory-store.ts";

const counter = new FakeTokenCounter();

function setup() {
  let now = Date.parse("2025-03-01T10:00:00.000Z");
  const clock = () => new Date(now);
  const store = new InMemoryMemoryStore({ clock, ids: sequentialIds() });
  return {
    store,
    clock,
    advance: (milliseconds: number) => {
      now += milliseconds;
    },
  };
}

const kinds: readonly MemoryKind[] = ["session-summary", "fact", "preference", "note"];

async function fillLongList(store: InMemoryMemoryStore, count: number) {
  for (let index = 0; index < count; index++) {
    await store.add({
      kind: kinds[index % kinds.length]!,
      content: `Memory number ${index}: ${"detail ".repeat(5 + (index % 7))}about component ${index}`,
      sourceSessionId: `s${index % 5}`,
    });
  }
}

describe("CoreMemoryBuilder", () => {
  it("is empty without memories", async () => {
    const { store } = setup();
    const built = await new CoreMemoryBuilder({ store, counter }).build({ maxTokens: 500 });
    expect(built).toMatchObject({ text: "", body: "", tokens: 0, memoryIds: [], compressed: false });
  });

  it("writes preferences and facts first, then notes, then session summaries", async () => {
    const { store, advance } = setup();
    await store.add({
      kind: "session-summary",
      content: "Fixed the login bug.\nNext: tests.",
      sourceSessionId: "s9",
    });
    advance(10);
    await store.add({ kind: "note", content: "Release on Friday" });
    advance(10);
    await store.add({ kind: "fact", content: "The API listens on port 8080" });
    advance(10);
    await store.add({ kind: "preference", content: "Prefers tabs over spaces" });
    const built = await new CoreMemoryBuilder({ store, counter }).build({ maxTokens: 1_000 });
    expect(built.text).toBe(
      [
        CORE_MEMORIES_HEADING,
        "## Preferences",
        "- Prefers tabs over spaces",
        "",
        "## Facts",
        "- The API listens on port 8080",
        "",
        "## Notes",
        "- Release on Friday",
        "",
        "## Earlier sessions",
        "- 2025-03-01 (session s9): Fixed the login bug.",
        "  Next: tests.",
      ].join("\n"),
    );
    expect(built.body).toBe(built.text.slice(CORE_MEMORIES_HEADING.length + 1));
    expect(built.tokens).toBe(counter.countText(built.text));
    expect(built.compressed).toBe(false);
  });

  it("respects the budget with a long memory list, keeping preferences before summaries", async () => {
    const { store } = setup();
    await fillLongList(store, 300);
    const builder = new CoreMemoryBuilder({ store, counter });
    const built = await builder.build({ maxTokens: 200 });
    expect(built.tokens).toBeLessThanOrEqual(200);
    expect(built.tokens).toBeGreaterThan(150);
    expect(built.text).toContain("## Preferences");
    expect(built.text).not.toContain("## Earlier sessions");
  });

  it("never exceeds any budget, with or without a summarizer (property)", async () => {
    const { store } = setup();
    await fillLongList(store, 120);
    const bloated = new FakeSummarizer({ respond: () => "compressed line\n".repeat(5_000) });
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 3_000 }), fc.boolean(), async (maxTokens, compress) => {
        const builder = new CoreMemoryBuilder({ store, counter, ...(compress && { summarizer: bloated }) });
        const built = await builder.build({ maxTokens });
        expect(counter.countText(built.text)).toBeLessThanOrEqual(maxTokens);
        expect(built.tokens).toBeLessThanOrEqual(maxTokens);
      }),
      { numRuns: 40 },
    );
  });

  it("compresses with the summarizer only when the memories do not fit", async () => {
    const { store } = setup();
    await store.add({ kind: "fact", content: "short fact" });
    const summarizer = new FakeSummarizer({ respond: () => "- everything, compressed" });
    const builder = new CoreMemoryBuilder({ store, counter, summarizer });
    expect((await builder.build({ maxTokens: 500 })).compressed).toBe(false);
    expect(summarizer.requests.length).toBe(0);
    await fillLongList(store, 100);
    const built = await builder.build({ maxTokens: 300 });
    expect(built).toMatchObject({
      compressed: true,
      text: `${CORE_MEMORIES_HEADING}\n- everything, compressed`,
    });
    expect(built.memoryIds.length).toBe(101);
    const request = summarizer.requests[0]!;
    expect(request.maxTokens).toBeLessThan(300);
    const input = request.messages[0]!.content[0]!;
    expect(input.type === "text" && input.text.startsWith("## Preferences")).toBe(true);
  });

  it("caches the block and calls the summarizer again only when a memory changes", async () => {
    const { store } = setup();
    await fillLongList(store, 60);
    const summarizer: FakeSummarizer = new FakeSummarizer({
      respond: (): string => `- compressed ${summarizer.requests.length}`,
    });
    const builder = new CoreMemoryBuilder({ store, counter, summarizer });
    const first = await builder.build({ excludeSessionId: "s1", maxTokens: 100 });
    const again = await builder.build({ excludeSessionId: "s1", maxTokens: 100 });
    expect(again).toBe(first);
    expect(summarizer.requests.length).toBe(1);
    await builder.build({ excludeSessionId: "s2", maxTokens: 100 });
    await builder.build({ excludeSessionId: "s1", maxTokens: 120 });
    expect(summarizer.requests.length).toBe(3);
    await store.add({ kind: "fact", content: "a brand new fact" });
    const rebuilt = await builder.build({ excludeSessionId: "s1", maxTokens: 100 });
    expect(summarizer.requests.length).toBe(4);
    expect(rebuilt.text).toContain("compressed 4");
    await builder.build({ excludeSessionId: "s1", maxTokens: 100 });
    expect(summarizer.requests.length).toBe(4);
  });

  it("shares one build between concurrent callers", async () => {
    const { store } = setup();
    await fillLongList(store, 60);
    const summarizer = new FakeSummarizer({ respond: () => "- compressed" });
    const builder = new CoreMemoryBuilder({ store, counter, summarizer });
    const [first, second] = await Promise.all([
      builder.build({ maxTokens: 100 }),
      builder.build({ maxTokens: 100 }),
    ]);
    expect(second).toBe(first);
    expect(summarizer.requests.length).toBe(1);
  });

  it("lets a caller that aborts stop waiting without failing the others sharing its build", async () => {
    const { store } = setup();
    await fillLongList(store, 60);
    let finish: (text: string) => void = () => undefined;
    const summarizer = new FakeSummarizer({ respond: () => new Promise<string>((done) => (finish = done)) });
    const builder = new CoreMemoryBuilder({ store, counter, summarizer });
    const controller = new AbortController();
    const aborted = builder.build({ maxTokens: 100, signal: controller.signal });
    const patient = builder.build({ maxTokens: 100 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort(new Error("ctrl-c on the first turn"));
    await expect(aborted).rejects.toThrow("ctrl-c on the first turn");
    finish("- compressed while one caller left");
    const built = await patient;
    expect(built).toMatchObject({ compressed: true, body: "- compressed while one caller left" });
    expect(built.error).toBeUndefined();
    // The build is kept for the next caller.
    expect(await builder.build({ maxTokens: 100 })).toBe(built);
    expect(summarizer.requests.length).toBe(1);
  });

  it("rebuilds once a memory it used has expired", async () => {
    const { store, clock, advance } = setup();
    await store.add({ kind: "fact", content: "the sprint ends today", expiresAt: "2025-03-01T12:00:00Z" });
    await store.add({ kind: "fact", content: "the repository uses pnpm" });
    const builder = new CoreMemoryBuilder({ store, counter, clock });
    expect((await builder.build({ maxTokens: 500 })).text).toContain("sprint");
    advance(3 * 3_600_000);
    const later = await builder.build({ maxTokens: 500 });
    expect(later.text).not.toContain("sprint");
    expect(later.text).toContain("pnpm");
  });

  it("falls back to what fits when the summarizer fails, and tries again next time", async () => {
    const { store } = setup();
    await fillLongList(store, 60);
    const summarizer = new FakeSummarizer({
      respond: () => {
        throw new Error("model unavailable");
      },
    });
    const builder = new CoreMemoryBuilder({ store, counter, summarizer });
    const built = await builder.build({ maxTokens: 150 });
    expect(built.error).toBeInstanceOf(Error);
    expect(built.tokens).toBeLessThanOrEqual(150);
    expect(built.text).toContain("## Preferences");
    await builder.build({ maxTokens: 150 });
    expect(summarizer.requests.length).toBe(2);
  });

  describe("no summary is injected twice", () => {
    it("leaves a session's own memories out of its block but shows them to other sessions", async () => {
      const { store } = setup();
      await store.add({
        kind: "session-summary",
        content: "Session one migrated the database",
        sourceSessionId: "s1",
      });
      await store.add({
        kind: "session-summary",
        content: "Session two wrote the docs",
        sourceSessionId: "s2",
      });
      await store.add({ kind: "preference", content: "Answer in British English" });
      const builder = new CoreMemoryBuilder({ store, counter });
      const forOne = await builder.build({ excludeSessionId: "s1", maxTokens: 1_000 });
      const forTwo = await builder.build({ excludeSessionId: "s2", maxTokens: 1_000 });
      expect(forOne.text).not.toContain("migrated the database");
      expect(forOne.text).toContain("wrote the docs");
      expect(forTwo.text).toContain("migrated the database");
      expect(forTwo.text).not.toContain("wrote the docs");
      expect(forOne.text).toContain("British English");
    });

    it("does not pass a session's own summary to the summarizer either", async () => {
      const { store } = setup();
      await fillLongList(store, 60);
      await store.add({
        kind: "session-summary",
        content: "OWN-SUMMARY-MARKER of session x",
        sourceSessionId: "x",
      });
      const summarizer = new FakeSummarizer({ respond: () => "- compressed" });
      await new CoreMemoryBuilder({ store, counter, summarizer }).build({
        excludeSessionId: "x",
        maxTokens: 100,
      });
      const input = summarizer.requests[0]!.messages[0]!.content[0]!;
      expect(input.type === "text" && input.text).not.toContain("own summary marker");
      expect(input.type === "text" && input.text.toLowerCase()).not.toContain("own-summary-marker");
    });
  });
});
