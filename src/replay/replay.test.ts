import { describe, expect, it } from "vitest";
import type { Message } from "../model/message.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import { governedReplay, replayConversation, requestPoints } from "./replay.ts";
import { preset } from "../governance/presets.ts";

function longSession(): Message[] {
  const builder = new HistoryBuilder();
  for (let turn = 0; turn < 6; turn++) {
    builder.user(`task ${turn}`);
    for (let step = 0; step < 15; step++) {
      builder.step([
        {
          name: "read_file",
          input: { path: `src/f${turn}-${step}.ts` },
          output: `${turn}/${step}\n${"x".repeat(6_000)}`,
        },
      ]);
    }
    builder.reply(`done ${turn}`);
  }
  return builder.build();
}

describe("replayConversation", () => {
  it("makes one request per assistant reply and reports consistent totals", async () => {
    const messages = longSession();
    const dumped: number[] = [];
    const { requests, totals } = await replayConversation(messages, {
      contextWindow: 32_000,
      reservedOutputTokens: 4_000,
      counter: new FakeTokenCounter(),
      summarizer: new FakeSummarizer(),
      onRequest: (index) => void dumped.push(index),
    });
    expect(requests).toHaveLength(requestPoints(messages).length);
    expect(requests).toHaveLength(6 * 16);
    expect(dumped).toEqual(requests.map((request) => request.index));
    expect(totals.refused).toBe(0);
    expect(requests.some((request) => request.events.includes("tool-output-offloaded"))).toBe(true);
    expect(totals.maxGovernedTokens + 4_000).toBeLessThanOrEqual(32_000);
    expect(totals.maxRawTokens).toBeGreaterThan(32_000);
    expect(totals.governedInputTokens).toBeLessThan(totals.rawInputTokens);
    expect(totals.cachedInputTokens).toBeLessThanOrEqual(totals.governedInputTokens);
    expect(totals.cachedInputTokens).toBeGreaterThan(0);
    expect(totals.costUnits).toBeLessThan(totals.rawCostUnits);
    for (const request of requests) {
      expect(request.cachedTokens).toBeLessThanOrEqual(request.governedTokens);
      expect(request.governedTokens).toBeLessThanOrEqual(request.rawTokens + 1);
    }
  });
});

it("compacts when offloading is off and still keeps every request inside the window", async () => {
  const { totals } = await replayConversation(longSession(), {
    contextWindow: 32_000,
    reservedOutputTokens: 4_000,
    counter: new FakeTokenCounter(),
    summarizer: new FakeSummarizer(),
    pipeline: preset("default", { offloadMinPrunableTokens: 0, truncateToolResultsAbove: 0 }),
  });
  expect(totals.compactions).toBeGreaterThan(0);
  expect(totals.refused).toBe(0);
  expect(totals.maxGovernedTokens + 4_000).toBeLessThanOrEqual(32_000);
});

describe("governedReplay", () => {
  it("grows one history array step by step instead of copying the history for each request", async () => {
    const messages = longSession();
    const points = requestPoints(messages);
    const replay = governedReplay(messages, {
      contextWindow: 32_000,
      reservedOutputTokens: 4_000,
      counter: new FakeTokenCounter(),
      summarizer: new FakeSummarizer(),
    });
    const arrays = new Set<readonly Message[]>();
    for await (const step of replay.steps) {
      expect(step.history).toEqual(messages.slice(0, points[step.index]));
      arrays.add(step.history);
    }
    expect(arrays.size).toBe(1);
  });
});
