import { describe, expect, it } from "vitest";
import { messageText, toolCallsOf, toolResultsOf } from "../../model/blocks.ts";
import { sequentialIds } from "../../model/ids.ts";
import type { Message } from "../../model/message.ts";
import { FakeSummarizer } from "../../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../../test/fake-token-counter.ts";
import { HistoryBuilder } from "../../test/history-builder.ts";
import type { GovernanceEvent } from "../events.ts";
import type { MemorySink, ProcessorContext } from "../processor.ts";
import { resolveGovernorSettings } from "../governor-settings.ts";
import { preset } from "../presets.ts";
import { createTrimTurns } from "./trim-turns.ts";

const trimTurns = createTrimTurns({ maxTurns: 6 });

function context(summarizer = new FakeSummarizer()) {
  const counter = new FakeTokenCounter();
  const events: GovernanceEvent[] = [];
  const remembered: Parameters<MemorySink>[0][] = [];
  const value = {
    settings: resolveGovernorSettings(),
    window: { contextWindow: 100_000, reservedOutput: 4_000, usable: 96_000 },
    fixedTokens: 0,
    tokensOf: (message: Message) => counter.countMessage(message),
    summarizer,
    memorySink: (entry) => void remembered.push(entry),
    guard: {},
    force: false,
    ids: sequentialIds(),
    clock: () => new Date("2026-01-01T00:00:00Z"),
    emit: (event) => events.push(event),
  } satisfies ProcessorContext;
  return { context: value, events, remembered, summarizer };
}

/** The CowAgent seed's chat: each turn a question, a tool call and an answer. */
function chat(turns: number): Message[] {
  const builder = new HistoryBuilder().system("You are a helpful agent.");
  for (let turn = 1; turn <= turns; turn++) {
    builder
      .user(`question ${turn}`)
      .step([{ name: "search", input: { query: `q${turn}` }, output: `result ${turn}` }])
      .reply(`answer ${turn}`);
  }
  return builder.build();
}

describe("trimTurns", () => {
  it("above maxTurns, the oldest half of the complete turns becomes one summary standing where they stood", async () => {
    const history = chat(7);
    const { context: processorContext, events, remembered, summarizer } = context();
    const output = await trimTurns.process(history, processorContext);
    // 6 complete turns before the current one: the oldest 3 go.
    expect(output.map((message) => message.role)).toEqual([
      "system",
      "user",
      ...Array(4).fill(["user", "assistant", "tool", "assistant"]).flat(),
    ]);
    const summary = output[1]!;
    expect(summary.kind).toBe("summary");
    expect(summary.summaryOf).toEqual({ fromSeq: 1, toSeq: 12, messageCount: 12 });
    expect(messageText(summary)).toMatch(/^\[Summary of 12 earlier messages/);
    expect(messageText(summary)).toContain("question 1");
    expect(messageText(output[2]!)).toBe("question 4");
    // Whole turns go: every call left has its result.
    const calls = output.flatMap(toolCallsOf).map((call) => call.id);
    expect(output.flatMap(toolResultsOf).map((result) => result.callId)).toEqual(calls);
    expect(summarizer.requests).toHaveLength(1);
    expect(remembered).toEqual([
      {
        sessionId: "session",
        summary: expect.stringContaining("question 3") as string,
        messageIds: history.slice(1, 13).map((message) => message.id),
      },
    ]);
    expect(events).toEqual([
      expect.objectContaining({ type: "turns-trimmed", turns: 3, messageIds: remembered[0]!.messageIds }),
    ]);
  });

  it("a second trim updates the earlier summary instead of adding another", async () => {
    const { context: first } = context();
    const trimmed = await trimTurns.process(chat(7), first);
    const more = new HistoryBuilder({ sessionId: "session" });
    for (let turn = 8; turn <= 10; turn++) more.user(`question ${turn}`).reply(`answer ${turn}`);
    const grown = [
      ...trimmed,
      ...more.build().map((message, index) => ({
        ...message,
        id: `late_${index}`,
        seq: 29 + index,
        turn: 8 + Math.floor(index / 2),
      })),
    ];
    const { context: second, summarizer } = context();
    const output = await trimTurns.process(grown, second);
    const summaries = output.filter((message) => message.kind === "summary");
    expect(summaries).toHaveLength(1);
    expect(summaries[0]!.summaryOf).toMatchObject({ fromSeq: 1 });
    expect(summarizer.requests[0]!.previousSummary).toContain("question 1");
    expect(messageText(summaries[0]!)).toContain("question 5");
    expect(output.filter((message) => message.role === "user" && message.kind === undefined)).toHaveLength(4);
  });

  it("does nothing at or below maxTurns, or when maxTurns is 0", async () => {
    const history = chat(6);
    expect(await trimTurns.process(history, context().context)).toBe(history);
    // maxTurns 0 leaves the processor out of the preset's pipeline.
    expect(preset("default", { maxTurns: 0 }).processors.map((processor) => processor.name)).not.toContain(
      "trim-turns",
    );
    expect(() => createTrimTurns({ maxTurns: 0 })).toThrow(/maxTurns/);
  });

  it("a failing summarizer still trims, with a marker saying how much was removed, and says it failed", async () => {
    const failing = new FakeSummarizer({
      respond: () => {
        throw new Error("model down");
      },
    });
    const { context: failingContext, events } = context(failing);
    const output = await trimTurns.process(chat(7), failingContext);
    expect(messageText(output[1]!)).toContain("[Earlier conversation trimmed — 12 messages removed");
    expect(events.filter((event) => event.type === "summarizer-failed")).toMatchObject([
      { reason: "model down", fallback: "marker" },
    ]);

    const silent = new FakeSummarizer({ respond: () => "  " });
    const quiet = context(silent);
    await trimTurns.process(chat(7), quiet.context);
    expect(quiet.events.find((event) => event.type === "summarizer-failed")).toMatchObject({
      reason: "the summarizer answered with an empty summary",
    });
  });
});
