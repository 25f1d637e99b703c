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
