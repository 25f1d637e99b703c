import { describe, expect, it } from "vitest";
import type { Message } from "../model/message.ts";
import { cacheProfiles } from "../pricing/cache-profile.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import { ReplayMeter } from "./replay-meter.ts";

const counter = new FakeTokenCounter();
const tokensOf = (message: Message) => counter.countMessage(message);
const fixed = { identity: "system", tokens: 2_000 };

/** History: the agent reads a file; the reply edits a line of it. */
function session(): { history: Message[]; reply: Message[]; read: Message } {
  const messages = new HistoryBuilder()
    .user("fix computeTotal")
    .step([
      {
        name: "Read",
        input: { path: "src/total.ts" },
        output: "export function computeTotal(items) {\n  return items.reduce(sumPrices, 0);\n}",
      },
    ])
    .step([
      {
        name: "Edit",
        input: { path: "src/total.ts", old_string: "  return items.reduce(sumPrices, 0);", new_string: "x" },
        output: "ok",
      },
    ])
    .build();
  const at = messages.findLastIndex((message) => message.role === "assistant");
  const history = messages.slice(0, at);
  return {
    history,
    reply: messages.slice(at, at + 1),
    read: history.find((message) => message.role === "tool")!,
  };
}

describe("ReplayMeter", () => {
  it("charges a re-read when the view lacks what the reply used: once per output until the view is rewritten", () => {
    const { history, reply, read } = session();
    const meter = new ReplayMeter({ cache: cacheProfiles.anthropic, tokensOf });
    const without = history.filter((message) => message !== read);
    const first = meter.request({ at: 0, fixed, history, view: without, reply });
    expect(first.grounding?.missing.length).toBeGreaterThan(0);
    const viewTokens = first.bill.tokens;
    expect(first.rereadCostUnits).toBeCloseTo(viewTokens * 0.1 + (tokensOf(read) + 60) * 1.25 + 60 * 5);
    // The same view grown at its end: the output was read back already.
    const second = meter.request({ at: 1_000, fixed, history, view: [...without], reply });
    expect(second.rereadCostUnits).toBe(0);
    // A rewritten view (a checkpoint) may have dropped it again.
    const rewritten = [{ ...without[0]! }, ...without.slice(1)];
    expect(
      meter.request({ at: 2_000, fixed, history, view: rewritten, reply }).rereadCostUnits,
    ).toBeGreaterThan(0);
    expect(meter.totals.rereads).toBe(2);
    expect(meter.request({ at: 3_000, fixed, history, view: history, reply }).rereadCostUnits).toBe(0);
  });

  it("bills summaries as LLM calls at the session model's prices, or at the summarizing model's", () => {
    const meter = new ReplayMeter({ cache: cacheProfiles.openai, tokensOf });
    meter.summary({ inputTokens: 10_000, outputTokens: 1_000 });
    expect(meter.totals.summarizerCostUnits).toBe(10_000 + 1_000 * 8);
    const cheap = new ReplayMeter({
      cache: cacheProfiles.openai,
      tokensOf,
      summaryPrices: { input: 0.2, output: 1.6 },
    });
    cheap.summary({ inputTokens: 10_000, outputTokens: 1_000 });
    expect(cheap.totals.summarizerCostUnits).toBe(2_000 + 1_600);
    expect(cheap.totals.costWithRereads).toBe(cheap.totals.summarizerCostUnits);
  });
});
