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
  it("charges a re-read when the view lacks what the reply used: once per output, and its carry, until the view is rewritten", () => {
    const { history, reply, read } = session();
    const meter = new ReplayMeter({ cache: cacheProfiles.anthropic, tokensOf });
    const without = history.filter((message) => message !== read);
    const first = meter.request({ at: 0, fixed, history, view: without, reply });
    expect(first.grounding?.missing.length).toBeGreaterThan(0);
    const viewTokens = first.bill.tokens;
    expect(first.rereadCostUnits).toBeCloseTo(viewTokens * 0.1 + (tokensOf(read) + 60) * 1.25 + 60 * 5);
    // The same view grown at its end: the output was read back already, and the agent's context carries it (and
    // its call), read from the cache, until the view is rewritten.
    const second = meter.request({ at: 1_000, fixed, history, view: [...without], reply });
    expect(second.rereadCostUnits).toBeCloseTo((tokensOf(read) + 60) * 0.1);
    // A rewritten view (a checkpoint) may have dropped it again.
    const rewritten = [{ ...without[0]! }, ...without.slice(1)];
    expect(
      meter.request({ at: 2_000, fixed, history, view: rewritten, reply }).rereadCostUnits,
    ).toBeGreaterThan(0);
    expect(meter.totals.rereads).toBe(2);
    expect(meter.request({ at: 3_000, fixed, history, view: history, reply }).rereadCostUnits).toBe(0);
  });

  it("charges a re-read once while a budget notice (new on every request) ends the view", () => {
    const { history, reply, read } = session();
    const meter = new ReplayMeter({ cache: cacheProfiles.anthropic, tokensOf });
    const without = history.filter((message) => message !== read);
    const notice = (): Message => ({
      ...without.at(-1)!,
      id: `notice-${Math.random()}`,
      role: "user",
      content: [{ type: "text", text: "[context budget notice]" }],
      metadata: { notice: "budget-exit" },
    });
    expect(
      meter.request({ at: 0, fixed, history, view: [...without, notice()], reply }).rereadCostUnits,
    ).toBeGreaterThan(0);
    expect(
      meter.request({ at: 1_000, fixed, history, view: [...without, notice()], reply }).rereadCostUnits,
    ).toBeCloseTo((tokensOf(read) + 60) * 0.1);
    expect(meter.totals.rereads).toBe(1);
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

/** Array elements copied by `Array.prototype.slice` while `run` runs. */
function elementsSliced(run: () => void): number {
  const slice = Array.prototype.slice;
  let copied = 0;
  Array.prototype.slice = function (this: unknown[], ...range: [number?, number?]) {
    const copy = slice.apply(this, range);
    copied += copy.length;
    return copy;
  };
  try {
    run();
  } finally {
    Array.prototype.slice = slice;
  }
  return copied;
}

describe("ReplayMeter", () => {
  it.each([
    ["with no system prompt", 0],
    ["with a system prompt", 2_000],
  ])("does not copy what it kept of a payload that only grows (%s), under every cache", (_, fixedTokens) => {
    const builder = new HistoryBuilder();
    for (let step = 0; step < 2_100; step++)
      builder.step([{ name: "Read", input: { file_path: `src/f${step}.ts` }, output: `line ${step}` }]);
    const messages = builder.build();
    for (const cache of [cacheProfiles.anthropic, cacheProfiles.openai]) {
      const meter = new ReplayMeter({ cache, tokensOf: () => 50, grounding: false });
      const fixed = { identity: "system", tokens: fixedTokens };
      const request = (view: readonly Message[]) =>
        meter.request({ at: view.length * 1_000, fixed, history: view, view, reply: [] });
      for (let end = 2; end < 4_000; end += 2) request(messages.slice(0, end));
      const views = Array.from({ length: 50 }, (_, step) => messages.slice(0, 4_000 + 2 * step));
      // Before the fix, each request copied the whole payload (4,000 segments or more) at least once.
      expect(elementsSliced(() => views.forEach(request))).toBeLessThan(4_000);
    }
  });
});

describe("ReplayMeter over one growing array", () => {
  it("bills a view grown in place between requests like fresh copies of it", () => {
    const builder = new HistoryBuilder();
    for (let step = 0; step < 60; step++)
      builder.step([{ name: "Read", input: { file_path: `src/f${step}.ts` }, output: `line ${step}` }]);
    const messages = builder.build();
    const [inPlace, copies] = [0, 1].map(
      () => new ReplayMeter({ cache: cacheProfiles.anthropic, tokensOf: () => 600, grounding: false }),
    );
    const fixed = { identity: "system", tokens: 2_000 };
    const growing: Message[] = [];
    for (let end = 2; end <= messages.length; end += 2) {
      growing.push(messages[end - 2]!, messages[end - 1]!);
      const request = { at: end * 1_000, fixed, reply: [] };
      const copy = messages.slice(0, end);
      expect(inPlace!.request({ ...request, history: growing, view: growing }).bill).toEqual(
        copies!.request({ ...request, history: copy, view: copy }).bill,
      );
    }
  });
});

/** `items` with a counter of the elements read through it. */
function counting<T>(items: readonly T[]): { list: readonly T[]; reads: () => number } {
  let reads = 0;
  const list = new Proxy(items, {
    get(target, property, receiver) {
      if (typeof property === "string" && /^\d+$/.test(property)) reads++;
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
  return { list, reads: () => reads };
}

describe("ReplayMeter with `unchanged`", () => {
  it("reads only the messages a growing view added, and bills it as without", () => {
    const builder = new HistoryBuilder();
    for (let step = 0; step < 1_100; step++)
      builder.step([{ name: "Read", input: { file_path: `src/f${step}.ts` }, output: `line ${step}` }]);
    const messages = builder.build();
    const fixed = { identity: "system", tokens: 2_000 };
    const [trusted, compared] = [0, 1].map(
      () => new ReplayMeter({ cache: cacheProfiles.anthropic, tokensOf: () => 50, grounding: false }),
    );
    let length = 0;
    for (let end = 2_000; end <= 2_100; end += 2) {
      const view = counting(messages.slice(0, end));
      const request = { at: end * 1_000, fixed, history: view.list, view: view.list, reply: [] };
      const billed = trusted!.request({ ...request, unchanged: length });
      // The first request reads every message; later ones only the two new ones (and a few around the end).
      if (length > 0) expect(view.reads()).toBeLessThan(20);
      expect(billed.bill).toEqual(compared!.request(request).bill);
      length = end;
    }
  });
});
