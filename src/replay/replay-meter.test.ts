import { describe, expect, it } from "vitest";
import type { Message } from "../model/message.ts";
import { cacheProfiles } from "../pricing/cache-profile.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import { ReplayMeter } from "./replay-meter.ts";

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
