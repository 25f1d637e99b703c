import { describe, expect, it } from "vitest";
import { messageText, toolResultText } from "../../model/blocks.ts";
import { sequentialIds } from "../../model/ids.ts";
import type { Message } from "../../model/message.ts";
import type { SummarizeRequest } from "../../summarize/summarizer.ts";
import { FakeSummarizer } from "../../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../../test/fake-token-counter.ts";
import { HistoryBuilder } from "../../test/history-builder.ts";
import type { GovernanceEvent } from "../events.ts";
import { MemoryOffloadStore } from "../offload-store.ts";
import { resolveGovernorSettings, type GovernorSettingsInput } from "../governor-settings.ts";
import { preset } from "../presets.ts";
import type { CompactionGuard, ProcessorContext } from "../processor.ts";
import { keptVerbatim, settledSegments } from "../settled-plan.ts";
import { createCompactSettledHistory } from "./compact-settled-history.ts";

const compactSettledHistory = createCompactSettledHistory();

const counter = new FakeTokenCounter();
const tokensOf = (message: Message) => counter.countMessage(message);
const output = (label: string, tokens: number) => `${label}\n${"r".repeat(tokens * 4)}`;

interface Setup {
  settings?: GovernorSettingsInput;
  requestsSoFar?: number;
  summarizer?: FakeSummarizer;
  guard?: CompactionGuard;
  offloadStore?: MemoryOffloadStore;
  sunk?: string[];
}

function context(setup: Setup = {}, events: GovernanceEvent[] = []): ProcessorContext {
  return {
    // Nothing held back as still needed (neededContext has its own tests).
    settings: resolveGovernorSettings({ groundingTarget: 0, ...setup.settings }),
    window: { contextWindow: 128_000, reservedOutput: 8_000, usable: 120_000 },
    fixedTokens: 10_000,
    tokensOf,
    summarizer: setup.summarizer ?? new FakeSummarizer(),
    offloadStore: setup.offloadStore ?? new MemoryOffloadStore(),
    memorySink: (entry) => void setup.sunk?.push(entry.summary),
    guard: setup.guard ?? {},
    force: false,
    requestsSoFar: setup.requestsSoFar ?? 60,
    ids: sequentialIds(),
    clock: () => new Date("2026-01-01T00:00:00Z"),
    emit: (event) => events.push(event),
  };
}

/** A long run: the instruction, then `steps` steps of grep with ~`tokens`-token outputs. */
function longRun(
  steps: number,
  tokens = 800,
  builder = new HistoryBuilder().user("find every caller"),
): Message[] {
  for (let step = 0; step < steps; step++) {
    builder.step([
      { name: "grep", input: { pattern: `caller${step}` }, output: output(`hit ${step}`, tokens) },
    ]);
  }
  return builder.build();
}

describe("settledSegments and keptVerbatim", () => {
  it("split the settled part around what stays verbatim, on step boundaries, before the tail", () => {
    const messages = new HistoryBuilder()
      .user("first task")
      .step([{ name: "grep", input: { pattern: "a" }, output: "a" }])
      .reply("done first")
      .user("second task")
      .step([{ name: "grep", input: { pattern: "b" }, output: "b" }])
      .step([{ name: "grep", input: { pattern: "c" }, output: "c" }])
      .reply("done second")
      .user("third task")
      .step([{ name: "grep", input: { pattern: "d" }, output: "d" }])
      .step([{ name: "grep", input: { pattern: "e" }, output: "e" }])
      .build();
    const kept = keptVerbatim(messages, new Set([12]), {
      dialogueTurns: 1,
      maxDialogueTokens: 1_000,
      tokensOf,
    });
    // First and current instruction, the previous turn's dialogue (user message and final reply), the step of
    // the working-set output at 12 (its assistant message at 11).
    expect([...kept].sort((a, b) => a - b)).toEqual([0, 4, 9, 10, 11, 12]);
    // The tail starts at the newest step (index 13); pieces of at least two messages between the kept ones.
    expect(settledSegments(messages, 0, 14, kept)).toEqual([
      { start: 1, end: 4 },
      { start: 5, end: 9 },
    ]);
  });

  it("leave a long pasted instruction to the summary but never the current one", () => {
    const messages = new HistoryBuilder()
      .user(`first, with a pasted log\n${"log line\n".repeat(2_000)}`)
      .reply("read it")
      .user(`current, also long\n${"log line\n".repeat(2_000)}`)
      .build();
    const kept = keptVerbatim(messages, new Set(), { dialogueTurns: 2, maxDialogueTokens: 1_000, tokensOf });
    // The first instruction goes to the summary; its short reply and the current instruction stay.
    expect([...kept].sort((a, b) => a - b)).toEqual([1, 2]);
  });
});

describe("compactSettledHistory", () => {
  it("summarises settled steps into a summary standing where they stood, leaving the tail and prefix as they were", async () => {
    const events: GovernanceEvent[] = [];
    const sunk: string[] = [];
    const messages = longRun(40);
    const output = await compactSettledHistory.process(messages, context({ sunk }, events));
    const summaryAt = output.findIndex((message) => message.kind === "summary");
    expect(summaryAt).toBe(1);
    expect(output[0]).toBe(messages[0]); // the instruction, the same object (cached prefix)
    expect(messageText(output[1]!)).toMatch(/^\[Summary of \d+ earlier messages/);
    // The tail — the newest step and the protection window — is untouched, object for object.
    const tail = output.slice(summaryAt + 1);
    expect(tail).toEqual(messages.slice(messages.length - tail.length));
    expect(tail.every((message, index) => message === messages[messages.length - tail.length + index])).toBe(
      true,
    );
    expect(tail.length).toBeGreaterThanOrEqual(2);
    expect(events.map((event) => event.type)).toEqual(["compaction-start", "compaction-end"]);
    expect(sunk).toHaveLength(1);
    const summaryOf = output[1]!.summaryOf!;
    expect(summaryOf.fromSeq).toBe(messages[1]!.seq);
    expect(summaryOf.toSeq).toBe(messages[messages.length - tail.length - 1]!.seq);
  });

  it("adds a new summary after an earlier one, which stays as it was (its cached prefix too)", async () => {
    const first = await compactSettledHistory.process(longRun(40), context());
    const grown = [...first];
    const builder = new HistoryBuilder();
    for (let step = 0; step < 40; step++)
      builder.step([
        { name: "grep", input: { pattern: `more${step}` }, output: output(`more ${step}`, 800) },
      ]);
    grown.push(
      ...builder.build().map((message, index) => ({ ...message, id: `more-${index}`, seq: 1_000 + index })),
    );
    const second = await compactSettledHistory.process(grown, context());
    const summaries = second.filter((message) => message.kind === "summary");
    expect(summaries).toHaveLength(2);
    expect(summaries[0]).toBe(first.find((message) => message.kind === "summary"));
  });

  it("does nothing while it would not pay: a young session expects too few requests to come", async () => {
    const summarizer = new FakeSummarizer();
    const messages = longRun(12);
    expect(await compactSettledHistory.process(messages, context({ requestsSoFar: 1, summarizer }))).toBe(
      messages,
    );
    expect(summarizer.requests).toHaveLength(0);
    const older = await compactSettledHistory.process(messages, context({ requestsSoFar: 60, summarizer }));
    expect(older.some((message) => message.kind === "summary")).toBe(true);
  });

  it("pays sooner where cached reads cost more (Gemini: a quarter of the input price)", async () => {
    const messages = longRun(14, 400);
    const anthropic = await compactSettledHistory.process(messages, context({ requestsSoFar: 10 }));
    const gemini = await compactSettledHistory.process(
      messages,
      context({ requestsSoFar: 10, settings: { pricing: "gemini" } }),
    );
    expect(anthropic).toBe(messages);
    expect(gemini.some((message) => message.kind === "summary")).toBe(true);
  });

  it("weighs what a summarizer that calls a model costs before calling it", async () => {
    const free = new FakeSummarizer();
    const priced = new FakeSummarizer({ price: { input: 1, output: 5 } });
    const messages = longRun(12);
    const withFree = await compactSettledHistory.process(
      messages,
      context({ summarizer: free, requestsSoFar: 20 }),
    );
    expect(withFree.some((message) => message.kind === "summary")).toBe(true);
    // Reading ~10k tokens at the full input price is more than ten requests of cached reads would save.
    expect(
      await compactSettledHistory.process(messages, context({ summarizer: priced, requestsSoFar: 20 })),
    ).toBe(messages);
    expect(priced.requests).toHaveLength(0);
    // A long session expects many more requests: then summarising pays even at that price.
    const long = await compactSettledHistory.process(
      messages,
      context({ summarizer: priced, requestsSoFar: 200 }),
    );
    expect(long.some((message) => message.kind === "summary")).toBe(true);
  });

  it("announces the compaction before the summarizer runs, times it by the injected clock, and reports a failure", async () => {
    const events: GovernanceEvent[] = [];
    const seenAtCall: string[][] = [];
    let now = Date.parse("2026-01-01T00:00:00Z");
    const summarizer = new FakeSummarizer({
      respond: () => {
        seenAtCall.push(events.map((event) => event.type));
        now += 1_500; // the summary takes 1.5 s by the session's clock
        return "what happened";
      },
    });
    const timed = { ...context({ summarizer }, events), clock: () => new Date(now) };
    await compactSettledHistory.process(longRun(40), timed);
    expect(seenAtCall[0]).toEqual(["compaction-start"]);
    const end = events.find((event) => event.type === "compaction-end");
    expect(end?.durationMs).toBe(1_500 * seenAtCall.length);

    const failedEvents: GovernanceEvent[] = [];
    const failing = new FakeSummarizer({
      respond: () => {
        throw new Error("rate limited");
      },
    });
    await compactSettledHistory.process(longRun(40), context({ summarizer: failing }, failedEvents));
    expect(failedEvents.map((event) => event.type)).toEqual([
      "compaction-start",
      "summarizer-failed",
      "compaction-rolled-back",
    ]);
    expect(failedEvents[1]).toMatchObject({ reason: "rate limited", fallback: "none" });
  });

  it("never trims history when the summarizer fails, and waits for the retry margin before calling it again", async () => {
    const failing = new FakeSummarizer({
      respond: () => {
        throw new Error("rate limited");
      },
    });
    const guard: CompactionGuard = {};
    const messages = longRun(40);
    expect(await compactSettledHistory.process(messages, context({ summarizer: failing, guard }))).toBe(
      messages,
    );
    const calls = failing.requests.length;
    expect(calls).toBeGreaterThan(0);
    const grown = longRun(42);
    expect(await compactSettledHistory.process(grown, context({ summarizer: failing, guard }))).toBe(grown);
    expect(failing.requests).toHaveLength(calls);
    const muchGrown = longRun(60);
    await compactSettledHistory.process(muchGrown, context({ summarizer: failing, guard }));
    expect(failing.requests.length).toBeGreaterThan(calls);
  });

  it("summarises what the tools really returned, reading offloaded outputs back", async () => {
    const offloadStore = new MemoryOffloadStore();
    const full = `path src/deep/module${"x".repeat(4_000)}.ts\n${"r".repeat(8_000)}`;
    const ref = await offloadStore.putText(full);
    const messages = longRun(40).map((message, index) =>
      index !== 2
        ? message
        : {
            ...message,
            content: message.content.map((block) =>
              block.type === "tool-result" ? { ...block, content: "preview", offloadRef: ref } : block,
            ),
          },
    );
    const summarizer = new FakeSummarizer();
    await compactSettledHistory.process(messages, context({ summarizer, offloadStore }));
    const seen = (summarizer.requests[0] as SummarizeRequest).messages.find(
      (message) => message.id === messages[2]!.id,
    )!;
    const block = seen.content[0]!;
    expect(block.type === "tool-result" && toolResultText(block.content)).toBe(full);
  });

  it("is in a preset's pipeline only when its knob turns it on, with compaction", () => {
    const names = (knobs: Parameters<typeof preset>[1]) =>
      preset("default", knobs).processors.map((processor) => processor.name);
    expect(names({})).not.toContain("compact-settled-history");
    expect(names({ compactSettledHistory: true })).toContain("compact-settled-history");
    expect(names({ compactSettledHistory: true, compactionTrigger: 0 })).not.toContain(
      "compact-settled-history",
    );
  });
});
