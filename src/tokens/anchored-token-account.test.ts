import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Message } from "../model/message.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import { AnchoredTokenAccount } from "./anchored-token-account.ts";
import { initialCalibration } from "./calibration.ts";
import { TokenCache } from "./token-cache.ts";

/** A history of `steps` tool steps whose outputs are `outputs[i]` characters long. */
function history(outputs: readonly number[]): Message[] {
  const builder = new HistoryBuilder().user("Investigate the failing build and fix it");
  outputs.forEach((length, index) =>
    builder.step([{ name: "bash", input: { command: `step ${index}` }, output: "x".repeat(length) }]),
  );
  return builder.build();
}

/** A provider that counts 1.2× what the fake counter says, plus a hidden system prompt of 3,000 tokens. */
function providerCount(cache: TokenCache, messages: readonly Message[]): number {
  return Math.round(1.2 * cache.total(messages)) + 3_000;
}

describe("AnchoredTokenAccount", () => {
  it("returns the reported number exactly when nothing was added (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 5_000 }), { maxLength: 12 }),
        fc.integer({ min: 1, max: 500_000 }),
        fc.integer({ min: 0, max: 10_000 }),
        (outputs, reported, fixedTokens) => {
          const account = new AnchoredTokenAccount({ counter: new FakeTokenCounter() });
          const payload = { messages: history(outputs), fixedTokens };
          account.observe(payload, reported);
          expect(account.estimate(payload)).toMatchObject({ total: reported, basis: "anchored" });
        },
      ),
    );
  });

  it("adds the calibrated estimate of new messages and of grown fixed tokens to the anchor", () => {
    const counter = new FakeTokenCounter();
    const messages = history([400, 800]);
    const account = new AnchoredTokenAccount({ counter, learn: false });
    account.observe({ messages: messages.slice(0, 3), fixedTokens: 100 }, 10_000);
    const added = messages.slice(3).reduce((sum, message) => sum + counter.countMessage(message), 0);
    const estimate = account.estimate({ messages, fixedTokens: 150 });
    expect(estimate).toMatchObject({ basis: "anchored", anchoredMessages: 3, anchorTokens: 10_000 });
    expect(estimate.total).toBe(10_000 + added + 50);
  });

  it("tokenises only new messages: a second request with nothing new tokenises nothing (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 2_000 }), { minLength: 1, maxLength: 10 }),
        fc.nat(5),
        (outputs, extra) => {
          const cache = new TokenCache(new FakeTokenCounter());
          const account = new AnchoredTokenAccount({ cache });
          const all = history([...outputs, ...new Array<number>(extra).fill(100)]);
          const first = all.slice(0, 1 + 2 * outputs.length);
          account.observe({ messages: first }, 5_000);
          const afterFirst = cache.invocations;
          expect(afterFirst).toBe(first.length);
          account.estimate({ messages: first });
          account.observe({ messages: first }, 5_000);
          expect(cache.invocations).toBe(afterFirst);
          account.estimate({ messages: all });
          expect(cache.invocations).toBe(all.length);
        },
      ),
    );
  });

  it("recognises messages reloaded from a store by id and cached count", () => {
    const cache = new TokenCache(new FakeTokenCounter());
    const account = new AnchoredTokenAccount({ cache });
    const stored = cache.withCounts(history([300, 300]));
    account.observe({ messages: stored }, 7_000);
    const reloaded = stored.map((message) => ({ ...message, content: [...message.content] }));
    expect(account.estimate({ messages: reloaded })).toMatchObject({ basis: "anchored", total: 7_000 });
  });

  it("falls back to a calibrated whole estimate when governance rewrote most of the prefix", () => {
    const cache = new TokenCache(new FakeTokenCounter());
    const account = new AnchoredTokenAccount({ cache });
    const messages = history([4_000, 4_000, 4_000, 200]);
    account.observe({ messages }, providerCount(cache, messages));
    const summary: Message = {
      ...messages[0]!,
      id: "summary",
      kind: "summary",
      content: [{ type: "text", text: "Summary." }],
    };
    const compacted = [summary, ...messages.slice(-2)];
    const estimate = account.estimate({ messages: compacted });
    expect(estimate.basis).toBe("calibrated");
    const { factor, hiddenTokens } = account.calibration;
    expect(estimate.total).toBe(Math.round(factor * cache.total(compacted) + hiddenTokens));
  });

  it("rebases on the anchor when governance rewrote only a small part near its end", () => {
    const cache = new TokenCache(new FakeTokenCounter());
    const account = new AnchoredTokenAccount({ cache, learn: false });
    const messages = history([4_000, 4_000, 4_000, 800]);
    account.observe({ messages }, 20_000);
    const last = messages.at(-1)!;
    const truncated: Message = {
      ...last,
      content: [{ type: "tool-result", callId: "call_4", toolName: "bash", content: "x".repeat(80) }],
    };
    const estimate = account.estimate({ messages: [...messages.slice(0, -1), truncated] });
    expect(estimate.basis).toBe("rebased");
    expect(estimate.total).toBe(20_000 - cache.tokensOf(last) + cache.tokensOf(truncated));
  });

  it("learns the provider's ratio and hidden tokens, so later estimates get closer", () => {
    const cache = new TokenCache(new FakeTokenCounter());
    const learning = new AnchoredTokenAccount({ cache });
    const fixed = new AnchoredTokenAccount({ cache, learn: false });
    const messages = history(Array.from({ length: 30 }, (_, index) => 6_000 + ((index * 977) % 8_000)));
    const errors = { learning: [] as number[], fixed: [] as number[] };
    for (let end = 3; end <= messages.length; end += 2) {
      const payload = { messages: messages.slice(0, end) };
      const truth = providerCount(cache, payload.messages);
      if (end > 3) {
        errors.learning.push(Math.abs(learning.estimate(payload).total - truth));
        errors.fixed.push(Math.abs(fixed.estimate(payload).total - truth));
      }
      learning.observe(payload, truth);
      fixed.observe(payload, truth);
    }
    expect(learning.calibration.factor).toBeCloseTo(1.2, 1);
    expect(learning.calibration.hiddenTokens).toBeGreaterThan(2_000);
    const late = (values: number[]) => values.slice(-5).reduce((sum, value) => sum + value, 0);
    expect(late(errors.learning)).toBeLessThan(late(errors.fixed) / 3);
  });

  it("starts from a persisted calibration and forgets its anchor on reset", () => {
    const calibration = {
      ...initialCalibration(),
      factor: 1.5,
      hiddenTokens: 1_000,
      uncalibratedError: 0.2,
      calibratedError: 0.05,
    };
    const account = new AnchoredTokenAccount({ counter: new FakeTokenCounter(), calibration, learn: false });
    const messages = history([400]);
    account.observe({ messages }, 9_999);
    expect(account.anchor).toEqual({ messages: messages.length, tokens: 9_999 });
    account.reset();
    const estimate = account.estimate({ messages });
    expect(estimate.basis).toBe("calibrated");
    expect(estimate.total).toBe(Math.round(1.5 * estimate.estimatedTotal + 1_000));
  });

  it("needs a counter or a cache", () => {
    expect(() => new AnchoredTokenAccount({})).toThrow(/counter/);
  });
});
