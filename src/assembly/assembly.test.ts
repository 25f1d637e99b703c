import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sequentialIds } from "../model/ids.ts";
import { createGovernor } from "../governance/governor.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import { contextStats } from "./context-stats.ts";
import { inspectPayload } from "./inspect.ts";
import { assemblePayload, currentInputStart } from "./payload.ts";
import { assembleSystemPrompt, iterationBudgetSection } from "./system-prompt.ts";
import { preset } from "../governance/presets.ts";

const counter = new FakeTokenCounter({ overhead: 0 });

describe("assembleSystemPrompt", () => {
  it("orders standard sections as the seed does, user sections after, empty ones dropped", () => {
    const system = assembleSystemPrompt(
      [
        { name: "notifications", content: "build finished" },
        { name: "my-rules", content: "Prefer small commits." },
        { name: "core-memories", content: "- user prefers pnpm" },
        { name: "identity", content: "You are a coding agent." },
        { name: "project-context", content: "   " },
        iterationBudgetSection(15),
        { name: "tool-rules", content: "Read before you edit." },
      ],
      counter,
    );
    expect(system.sections.map((section) => section.name)).toEqual([
      "identity",
      "iteration-budget",
      "tool-rules",
      "core-memories",
      "notifications",
      "my-rules",
    ]);
    expect(system.text.startsWith("# IDENTITY AND PURPOSE\nYou are a coding agent.")).toBe(true);
    expect(system.text).toContain("# ITERATION BUDGET\nYou can take at most 15");
    expect(system.text.endsWith("Prefer small commits.")).toBe(true);
  });

  it("holds each section to its token budget and says so", () => {
    const memories = Array.from({ length: 200 }, (_, index) => `- memory ${index}`).join("\n");
    const system = assembleSystemPrompt(
      [{ name: "core-memories", content: memories, maxTokens: 100 }],
      counter,
    );
    expect(system.sections[0]!.truncated).toBe(true);
    expect(counter.countText(system.text)).toBeLessThanOrEqual(100);
    expect(system.text).toContain("section shortened");
  });

  it("never lets a section's block, heading and notice included, exceed its budget (property)", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 2_000 }).filter((content) => content.trim() !== ""),
        fc.integer({ min: 1, max: 400 }),
        fc.constantFrom<string | null | undefined>(undefined, null, "A LONGER HEADING OF OUR OWN"),
        (content, maxTokens, heading) => {
          const system = assembleSystemPrompt(
            [{ name: "core-memories", content, maxTokens, ...(heading !== undefined && { heading }) }],
            counter,
          );
          expect(system.sections[0]!.tokens).toBeLessThanOrEqual(maxTokens);
          expect(system.tokens).toBeLessThanOrEqual(maxTokens);
          if (!system.sections[0]!.truncated) expect(system.text.endsWith(content.trim())).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("rejects a section without a name", () => {
    expect(() => assembleSystemPrompt([{ name: "", content: "x" }], counter)).toThrow(/prompt section 0/);
  });
});

describe("payload order", () => {
  it("is system → first task → summary → preserved history → current input, with persisted system messages dropped", async () => {
    const builder = new HistoryBuilder().system("an old persisted system prompt");
    for (let turn = 0; turn < 6; turn++) {
      builder
        .user(`task ${turn}`)
        .step([{ name: "bash", output: "o".repeat(4_000) }])
        .reply(`done ${turn}`);
    }
    builder.user("the current question");
    const governor = createGovernor({
      contextWindow: 6_000,
      reservedOutputTokens: 500,
      counter,
      summarizer: new FakeSummarizer(),
      ids: sequentialIds(),
      // Compaction at the trigger (Coqui's order); settled-history compaction keeps the first task before it.
      pipeline: preset("default", {
        truncateToolResultsAbove: 0,
        offloadMinPrunableTokens: 0,
        compactSettledHistory: false,
      }),
    });
    const governed = await governor.prepare(builder.build());
    const system = assembleSystemPrompt([{ name: "identity", content: "fresh prompt" }], counter);
    const payload = assemblePayload(system, governed.messages);
    expect(payload.system).toContain("fresh prompt");
    expect(payload.messages.some((message) => message.role === "system")).toBe(false);
    // The head anchor: the task as the user first put it stays ahead of the summary of what followed.
    expect(payload.messages[0]!.content).toEqual([{ type: "text", text: "task 0" }]);
    expect(payload.messages[1]!.kind).toBe("summary");
    expect(payload.messages.at(-1)!.content).toEqual([{ type: "text", text: "the current question" }]);
    expect(currentInputStart(payload.messages)).toBe(payload.messages.length - 1);
    const inspection = inspectPayload(payload, system.sections, governor.tokensOf, governed.events);
    const { channels } = inspection;
    expect(channels.summary).toBeGreaterThan(0);
    expect(channels.currentInput).toBe(governor.tokensOf(payload.messages.at(-1)!));
    const messagesTotal = payload.messages.reduce((sum, message) => sum + governor.tokensOf(message), 0);
    expect(channels.total).toBe(system.tokens + messagesTotal);
    expect(inspection.events.some((event) => event.type === "compaction-end")).toBe(true);
  });

  it("treats the newest tool results as the current input inside a run", () => {
    const messages = new HistoryBuilder()
      .user("go")
      .step([
        { name: "a", output: "1" },
        { name: "b", output: "2" },
      ])
      .build();
    expect(currentInputStart(messages)).toBe(2);
  });
});

describe("contextStats", () => {
  it("counts roles, characters, tokens and window use", () => {
    const messages = new HistoryBuilder().user("abcd").reply("efgh").build();
    const stats = contextStats(messages, (message) => counter.countMessage(message), {
      usable: 10,
      fixedTokens: 2,
    });
    expect(stats).toEqual({
      messages: 2,
      roles: { system: 0, user: 1, assistant: 1, tool: 0 },
      characters: 8,
      tokens: 4,
      windowUse: 0.4,
    });
  });
});
