import { describe, expect, it } from "vitest";
import { ContextOverflowError } from "../errors/errors.ts";
import { messageText } from "../model/blocks.ts";
import type { Message } from "../model/message.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import type { GovernanceEvent } from "./events.ts";
import { createGovernor, type GovernorOptions } from "./governor.ts";
import { preset } from "./presets.ts";

// One test per complaint that peers' users filed against their context management (see DESIGN.md).

const output = (label: string, characters = 2_400) => `${label}\n${"r".repeat(characters)}`;

function setup(overrides: Partial<GovernorOptions> = {}) {
  const events: GovernanceEvent[] = [];
  const summarizer = (overrides.summarizer as FakeSummarizer | undefined) ?? new FakeSummarizer();
  const governor = createGovernor({
    contextWindow: 20_000,
    reservedOutputTokens: 2_000,
    counter: new FakeTokenCounter(),
    summarizer,
    onEvent: (event) => events.push(event),
    ...overrides,
  });
  return { governor, events, summarizer };
}

function longRun(steps: number, builder = new HistoryBuilder().user("refactor the parser")): HistoryBuilder {
  for (let index = 0; index < steps; index++) {
    builder.step([{ name: "read_file", input: { path: `src/p${index}.ts` }, output: output(`p${index}`) }]);
  }
  return builder;
}

describe("peer complaints that must be impossible in ctxkit", () => {
  it("Gemini CLI / OpenCode: compaction loops — a failed compaction is not retried on every request", async () => {
    const inflating = new FakeSummarizer({ respond: () => "much longer ".repeat(20_000) });
    const { governor, events } = setup({
      summarizer: inflating,
      pipeline: preset("default", { truncateToolResultsAbove: 0, offloadMinPrunableTokens: 0 }),
    });
    const builder = longRun(27); // over the compaction trigger (0.9 of the usable window), under the window
    await governor.prepare(builder.build()).catch(() => undefined);
    const callsAfterFirst = inflating.requests.length;
    expect(callsAfterFirst).toBeGreaterThan(0);
    // Small growth: the guard holds, the summarizer is not called again.
    for (let index = 0; index < 5; index++) {
      builder.step([{ name: "grep", input: { pattern: `q${index}` }, output: "one line" }]);
      await governor.prepare(builder.build()).catch(() => undefined);
    }
    expect(inflating.requests.length).toBe(callsAfterFirst);
    expect(events.filter((event) => event.type === "checkpoint-skipped").length).toBeGreaterThan(0);
  });

  it("Gemini CLI: compaction that grows the context is rolled back", async () => {
    const inflating = new FakeSummarizer({ respond: () => "x".repeat(400_000) });
    const { governor, events } = setup({
      summarizer: inflating,
      contextWindow: 100_000,
      pipeline: preset("default", {
        truncateToolResultsAbove: 0,
        offloadMinPrunableTokens: 0,
        summaryMaxTokens: 100_000,
      }),
    });
    const history = longRun(150).build();
    const request = await governor.prepare(history);
    expect(events.map((event) => event.type)).toContain("compaction-rolled-back");
    expect(request.messages.some((message) => message.kind === "summary")).toBe(false);
    expect(governor.view).toEqual(history);
  });

  it("Gemini CLI / OpenCode: overflow errors that compaction did not prevent — no request exceeds the window", async () => {
    const { governor } = setup();
    const builder = new HistoryBuilder();
    for (let turn = 0; turn < 30; turn++) {
      builder.user(`task ${turn}`);
      longRun(3, builder);
      const request = await governor.prepare(builder.build());
      expect(request.tokens.total + request.tokens.reservedOutput).toBeLessThanOrEqual(20_000);
      builder.reply(`finished task ${turn}`);
    }
  });

  it("OpenCode: lost AGENTS.md instructions — system messages and the instruction survive compaction verbatim", async () => {
    const { governor, summarizer } = setup({
      pipeline: preset("default", { truncateToolResultsAbove: 0, offloadMinPrunableTokens: 0 }),
    });
    const builder = new HistoryBuilder().system("AGENTS.md: always run the linter before committing");
    builder.user("first: set up the project").reply("done");
    builder.user("never touch the vendored folder");
    longRun(40, builder);
    const history = builder.build();
    const request = await governor.prepare(history);
    expect(request.messages[0]).toBe(history[0]);
    expect(request.messages).toContain(
      history.find((message) => messageText(message) === "never touch the vendored folder"),
    );
    expect(request.messages.some((message) => message.kind === "summary")).toBe(true);
    expect(summarizer.requests.length).toBeGreaterThan(0);
  });

  it("OpenCode / Mastra: pruning that breaks the prompt cache — no rewrite between checkpoints, none that does not pay", async () => {
    const { governor, events } = setup({
      contextWindow: 400_000,
      // What the next reply may use is kept regardless (groundingTarget): off, so that only the cache arithmetic
      // decides here.
      pipeline: preset("default", {
        pricing: "anthropic",
        offloadProtectTokens: 4_000,
        offloadMinPrunableTokens: 2_000,
        groundingTarget: 0,
      }),
    });
    const builder = new HistoryBuilder().user("explore");
    let previous: readonly Message[] = [];
    let rewrites = 0;
    for (let step = 0; step < 60; step++) {
      builder.step([{ name: "read_file", input: { path: `f${step}` }, output: output(`f${step}`, 8_000) }]);
      const request = await governor.prepare(builder.build());
      if (request.checkpoint) rewrites++;
      else expect(JSON.stringify(request.messages.slice(0, previous.length))).toBe(JSON.stringify(previous));
      previous = governor.view;
    }
    // Early in the session the cache arithmetic refuses to rewrite; later, once it pays, batches are taken —
    // each one removing at least the minimum prunable amount, never one message at a time.
    expect(events.some((event) => event.type === "checkpoint-skipped")).toBe(true);
    expect(rewrites).toBeGreaterThan(0);
    const batches = events.filter((event) => event.type === "tool-output-offloaded");
    expect(batches.length).toBe(rewrites);
    for (const batch of batches) expect(batch.tokensBefore).toBeGreaterThanOrEqual(2_000);
  });

  it("OpenCode: auto-compaction off is honoured on overflow — an error with the numbers, not a silent compaction", async () => {
    const { governor, summarizer } = setup({
      pipeline: preset("default", {
        compactionTrigger: 0,
        truncateToolResultsAbove: 0,
        offloadMinPrunableTokens: 0,
      }),
    });
    const history = longRun(60).build();
    await expect(governor.prepare(history)).rejects.toBeInstanceOf(ContextOverflowError);
    expect(summarizer.requests).toHaveLength(0);
  });

  it("Codex: resumes the previous task after compaction — the current instruction stays last and after the summary", async () => {
    const { governor } = setup({
      pipeline: preset("default", { truncateToolResultsAbove: 0, offloadMinPrunableTokens: 0 }),
    });
    const builder = new HistoryBuilder().user("old task: migrate the database");
    longRun(40, builder);
    builder.reply("migration done");
    builder.user("new task: write the changelog");
    const request = await governor.prepare(builder.build());
    const users = request.messages.filter((message) => message.role === "user");
    expect(messageText(users.at(-1)!)).toBe("new task: write the changelog");
    const summaryAt = request.messages.findIndex((message) => message.kind === "summary");
    expect(summaryAt).toBeGreaterThanOrEqual(0);
    expect(summaryAt).toBeLessThan(request.messages.length - 1);
    expect(messageText(request.messages[summaryAt]!)).toMatch(/background for what follows/);
  });

  it("Codex: duplicated instructions — repeated compactions summarise each message once and keep one copy of the instruction", async () => {
    for (const compactSettledHistory of [false, true]) {
      const { governor } = setup({
        pipeline: preset("default", {
          truncateToolResultsAbove: 0,
          offloadMinPrunableTokens: 0,
          compactSettledHistory,
        }),
      });
      const builder = longRun(10);
      for (let round = 0; round < 6; round++) {
        longRun(15, builder);
        await governor.prepare(builder.build());
      }
      const view = governor.view;
      const summaries = view.filter((message) => message.kind === "summary");
      if (!compactSettledHistory) expect(summaries).toHaveLength(1);
      expect(summaries.length).toBeGreaterThan(0);
      // Summaries never overlap: each covers its own range, in order.
      for (let index = 1; index < summaries.length; index++)
        expect(summaries[index]!.summaryOf!.fromSeq).toBeGreaterThan(summaries[index - 1]!.summaryOf!.toSeq);
      expect(view.filter((message) => messageText(message) === "refactor the parser")).toHaveLength(1);
      expect(summaries.some((summary) => messageText(summary).includes("refactor the parser"))).toBe(false);
    }
  });
});
