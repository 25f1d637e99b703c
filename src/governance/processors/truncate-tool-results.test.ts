import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sequentialIds } from "../../model/ids.ts";
import type { Message } from "../../model/message.ts";
import { FakeSummarizer } from "../../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../../test/fake-token-counter.ts";
import { HistoryBuilder } from "../../test/history-builder.ts";
import type { GovernanceEvent } from "../events.ts";
import type { ProcessorContext } from "../processor.ts";
import { resolveGovernorSettings } from "../governor-settings.ts";
import { fitNewestStep } from "./truncate-tool-results.ts";

function context() {
  const counter = new FakeTokenCounter();
  const events: GovernanceEvent[] = [];
  const value = {
    settings: resolveGovernorSettings(),
    window: { contextWindow: 100_000, reservedOutput: 4_000, usable: 96_000 },
    fixedTokens: 0,
    tokensOf: (message: Message) => counter.countMessage(message),
    summarizer: new FakeSummarizer(),
    memorySink: () => undefined,
    guard: {},
    force: true,
    ids: sequentialIds(),
    clock: () => new Date("2026-01-01T00:00:00Z"),
    emit: (event) => events.push(event),
  } satisfies ProcessorContext;
  return { context: value, events };
}

describe("fitNewestStep", () => {
  it("never makes a result bigger than it was, whatever the budget (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 3_000 }),
        fc.integer({ min: 0, max: 4_000 }),
        async (outputChars, budget) => {
          const { context: value } = context();
          const history = new HistoryBuilder()
            .user("the task")
            .step([{ name: "bash", output: "x ".repeat(outputChars) }])
            .build();
          const fitted = await fitNewestStep(history, budget, value);
          fitted.forEach((message, index) =>
            expect(value.tokensOf(message)).toBeLessThanOrEqual(value.tokensOf(history[index]!)),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it("cuts a result well over the budget down to it and says so", async () => {
    const { context: value, events } = context();
    const history = new HistoryBuilder()
      .user("the task")
      .step([{ name: "bash", output: "line of output\n".repeat(2_000) }])
      .build();
    const fitted = await fitNewestStep(history, 1_000, value);
    const total = fitted.reduce((sum, message) => sum + value.tokensOf(message), 0);
    expect(total).toBeLessThanOrEqual(1_000);
    expect(events.map((event) => event.type)).toEqual(["tool-output-capped"]);
  });
});
