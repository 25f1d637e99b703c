import { describe, expect, it } from "vitest";
import type { GovernanceEvent } from "../governance/events.ts";
import { randomIds, sequentialIds, type IdGenerator } from "../model/ids.ts";
import { MemorySessionStore } from "../store/memory/index.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { createContextEngine } from "./context-engine.ts";
import { preset } from "../governance/presets.ts";

const clock = () => new Date("2026-03-01T12:00:00Z");
const SYSTEM = "You are a test agent.";

function engineOver(
  store: MemorySessionStore,
  summarizer: FakeSummarizer,
  events: GovernanceEvent[] = [],
  ids: IdGenerator = randomIds,
) {
  return createContextEngine({
    store,
    pipeline: preset("default", { compactionTrigger: 0.5 }),
    contextWindow: 16_000,
    maxOutputTokens: 2_000,
    tokenCounter: new FakeTokenCounter(),
    summarizer,
    // Two engines over one store (before and after a restart) must not make the same ids.
    ids,
    clock,
    onEvent: (event) => events.push(event),
  });
}

/** A session of `turns` committed turns of ~600 tokens each (the live session that stored them). */
async function storedSession(store: MemorySessionStore, turns: number, ids?: IdGenerator) {
  const session = (await engineOver(store, new FakeSummarizer(), [], ids)).session("s");
  for (let turn = 0; turn < turns; turn++) {
    await session.addUser(`question ${turn} ${"q".repeat(2_400)}`);
    await session.prepare({ system: SYSTEM });
    await session.recordAssistant({ content: `answer ${turn}`, usage: { input: 1_000, output: 5 } });
    await session.commit();
  }
  return session;
}

describe("EngineSession.preview", () => {
  it("shows what prepare then sends when no checkpoint is due", async () => {
    const store = new MemorySessionStore();
    await storedSession(store, 3);
    const session = (await engineOver(store, new FakeSummarizer())).session("s");
    await session.addUser("one more question");
    const preview = await session.preview({ system: SYSTEM });
    const prepared = await session.prepare({ system: SYSTEM });
    expect(preview.messages).toEqual(prepared.messages);
    expect(preview.tokens).toEqual(prepared.tokens);
  });

  it("makes a due checkpoint on a copy: no summarizer call, no event, no blob, and prepare still makes it", async () => {
    const store = new MemorySessionStore();
    await storedSession(store, 5);
    const summarizer = new FakeSummarizer();
    const events: GovernanceEvent[] = [];
    const session = (await engineOver(store, summarizer, events)).session("s");
    // Over half the usable window: the next request must compact.
    await session.addUser(`a long question ${"x".repeat(28_000)}`);
    const blobs = await store.blobs.list("s");
    const stored = await store.loadGovernorState("s");

    const preview = await session.preview({ system: SYSTEM });
    expect(preview.events.map((event) => event.type)).toContain("compaction-end");
    expect(summarizer.requests).toHaveLength(0);
    expect(events).toHaveLength(0);
    expect(await store.blobs.list("s")).toEqual(blobs);
    expect(await store.loadGovernorState("s")).toEqual(stored);

    const prepared = await session.prepare({ system: SYSTEM });
    expect(prepared.events.map((event) => event.type)).toContain("compaction-end");
    expect(summarizer.requests.length).toBeGreaterThan(0);
    expect(events.map((event) => event.type)).toContain("compaction-end");
  });

  it("takes none of the session's ids: what the session writes next is named as without the preview", async () => {
    const run = async (withPreview: boolean) => {
      const session = await storedSession(new MemorySessionStore(), 5, sequentialIds());
      await session.addUser(`a long question ${"x".repeat(28_000)}`);
      if (withPreview) await session.preview({ system: SYSTEM });
      const prepared = await session.prepare({ system: SYSTEM });
      const reply = await session.recordAssistant({ content: "ok" });
      return [...prepared.messages.map((message) => message.id), reply.id];
    };
    expect(await run(true)).toEqual(await run(false));
  });
});
