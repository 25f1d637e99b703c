// Optional checkpoints that keep not paying are considered less and less often (each skipped check doubles the
// wait for the next, up to 8×), while a checkpoint taken or mandatory starts over; a state stored before the
// count was kept still loads.
import { describe, expect, it } from "vitest";
import { sequentialIds } from "../model/ids.ts";
import type { Message } from "../model/message.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import type { GovernanceEvent } from "./events.ts";
import { createGovernor } from "./governor.ts";
import { parseGovernorState } from "./governor-state.ts";
import { createPipeline } from "./pipeline.ts";
import type { Processor } from "./processor.ts";
import { withContent } from "./rewrite.ts";

/** A history of `steps` tool steps after one instruction, each result about 400 tokens (fake counter: 4 chars). */
function history(steps: number): Message[] {
  const builder = new HistoryBuilder().user("work through the files");
  for (let step = 0; step < steps; step++)
    builder.step([{ name: "bash", input: { command: `cat f${step}` }, output: `${step} `.repeat(800) }]);
  return builder.build();
}

/**
 * A fold that does not pay: it shortens the first message by one character (the whole cached prefix rewritten to
 * save nothing), declaring an optional trigger on 500 tokens of tool output — unless told to pay, when its next
 * run cuts every tool output to a word. Counts its runs.
 */
function neverPaying(): { processor: Processor; runs: () => number; pay: () => void } {
  let runs = 0;
  let paying = false;
  const processor: Processor = {
    name: "never-paying",
    triggers: [{ kind: "tool-output", tokens: 500 }],
    process: (messages) => {
      runs++;
      const pays = paying;
      paying = false;
      if (pays)
        return messages.map((message) =>
          message.role === "tool"
            ? withContent(
                message,
                message.content.map((block) =>
                  block.type === "tool-result" ? { ...block, content: "cut" } : block,
                ),
              )
            : message,
        );
      const [first, ...rest] = messages;
      if (first === undefined || first.content[0]?.type !== "text") return messages;
      const text = first.content[0].text;
      return [withContent(first, [{ type: "text", text: text.slice(0, -1) }]), ...rest];
    },
  };
  return { processor, runs: () => runs, pay: () => (paying = true) };
}

function governor(processor: Processor, contextWindow = 400_000) {
  const events: GovernanceEvent[] = [];
  const instance = createGovernor({
    contextWindow,
    reservedOutputTokens: 20_000,
    counter: new FakeTokenCounter(),
    summarizer: new FakeSummarizer(),
    pipeline: createPipeline({ processors: [processor], settings: { protectTokens: 0, batchTokens: 2_000 } }),
    ids: sequentialIds(),
    clock: () => new Date("2026-01-01T00:00:00Z"),
    onEvent: (event) => events.push(event),
  });
  return { instance, events };
}

describe("optional checkpoints that keep not paying", () => {
  it("are folded far less often: each skipped check doubles the wait for the next, up to 8 times", async () => {
    const { processor, runs } = neverPaying();
    const { instance, events } = governor(processor);
    const messages = history(120);
    // The first request rebuilds the view (a mandatory checkpoint); then one step (call and result) at a time.
    await instance.prepare(messages.slice(0, 3));
    const first = runs();
    for (let end = 5; end <= messages.length; end += 2) await instance.prepare(messages.slice(0, end));
    const optional = runs() - first;
    // 120 results of ~550 tokens: ~66,000 tokens of tool output. At a fixed wait of 1,000 tokens the fold ran
    // every second request (58 times); waiting 1k, 2k, 4k, 8k, 8k, … tokens it runs 11 times.
    expect(optional).toBeGreaterThanOrEqual(8);
    expect(optional).toBeLessThanOrEqual(12);
    expect(events.filter((event) => event.type === "checkpoint-skipped")).toHaveLength(optional);
    expect(instance.snapshot().piled.skippedChecks).toBe(optional);
  });

  it("keep the base pace in a small window: the wait never passes 5% of the usable window", async () => {
    const { processor, runs } = neverPaying();
    // 40,000 tokens, 20,000 usable: 5% is the base wait (1,000 tokens) itself.
    const { instance } = governor(processor, 40_000);
    const messages = history(30);
    await instance.prepare(messages.slice(0, 3));
    const first = runs();
    for (let end = 5; end <= messages.length; end += 2) await instance.prepare(messages.slice(0, end));
    // ~16,000 tokens of tool output: a check every second request, as before the waits grew.
    expect(runs() - first).toBeGreaterThanOrEqual(13);
  });

  it("are considered at the base wait again once a checkpoint is taken", async () => {
    const { processor, runs, pay } = neverPaying();
    const { instance } = governor(processor);
    const messages = history(80);
    await instance.prepare(messages.slice(0, 3));
    let end = 5;
    for (; end <= 81; end += 2) await instance.prepare(messages.slice(0, end));
    expect(instance.snapshot().piled.skippedChecks).toBeGreaterThan(3);
    // The next check pays: the checkpoint is taken, and the count ends with it.
    pay();
    let taken = false;
    for (; !taken && end <= messages.length; end += 2)
      taken = (await instance.prepare(messages.slice(0, end))).checkpoint;
    expect(taken).toBe(true);
    expect(instance.snapshot().piled.skippedChecks).toBeUndefined();
    // The next check comes with the first 500 tokens of new output, and the one after at the base wait again
    // (1,000 tokens: two steps).
    const before = runs();
    for (const step of [0, 2, 4, 6]) await instance.prepare(messages.slice(0, end + step));
    expect(runs()).toBe(before + 2);
    expect(instance.snapshot().piled.skippedChecks).toBe(2);
  });

  it("restores a stored state without the count: a pending postponement counts as one skipped check", () => {
    const { instance } = governor(neverPaying().processor);
    const messages = history(4);
    const stored = {
      version: 1,
      view: messages.map((message) => ({ id: message.id })),
      covered: messages.length,
      lastCoveredId: messages.at(-1)!.id,
      requests: 4,
      emergencyStage: 0,
      piled: { toolTokens: 1_200, inputTokens: 0, nextCheckAt: 2_200, nextSettledCheckAt: 0 },
      guard: {},
      recentCalls: [],
    };
    expect(instance.restore(parseGovernorState(stored), messages)).toBe(true);
    expect(instance.snapshot().piled.skippedChecks).toBe(1);
    const fresh = { ...stored, piled: { ...stored.piled, nextCheckAt: 0 } };
    expect(instance.restore(parseGovernorState(fresh), messages)).toBe(true);
    expect(instance.snapshot().piled.skippedChecks).toBeUndefined();
  });
});
