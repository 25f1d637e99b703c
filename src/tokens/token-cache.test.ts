import { describe, expect, it } from "vitest";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import { CountingTokenCounter, TokenCache } from "./token-cache.ts";

const history = new HistoryBuilder()
  .user("List the files")
  .step([{ name: "bash", input: { command: "ls" }, output: "a.ts\nb.ts" }])
  .reply("Two files.")
  .build();

describe("TokenCache", () => {
  it("tokenises each message once, however often it is asked", () => {
    const counter = new FakeTokenCounter();
    const cache = new TokenCache(counter);
    const first = cache.total(history);
    expect(cache.total(history)).toBe(first);
    expect(cache.invocations).toBe(history.length);
    expect(counter.calls).toBe(history.length);
  });

  it("returns messages carrying their counts, the same objects when already counted", () => {
    const cache = new TokenCache(new FakeTokenCounter());
    const counted = cache.withCounts(history);
    expect(counted.every((message) => message.tokenizer === "fake:4" && message.tokens! > 0)).toBe(true);
    expect(cache.withCounts(counted).every((message, index) => message === counted[index])).toBe(true);
    expect(Object.isFrozen(counted[0])).toBe(true);
  });

  it("uses counts cached on messages by the same counter and recounts those of another", () => {
    const cache = new TokenCache(new FakeTokenCounter());
    const fromStore = { ...history[0]!, tokens: 123, tokenizer: "fake:4" };
    const fromOtherCounter = { ...history[0]!, tokens: 123, tokenizer: "o200k_base" };
    expect(cache.tokensOf(fromStore)).toBe(123);
    expect(cache.tokensOf(fromOtherCounter)).not.toBe(123);
    expect(cache.invocations).toBe(1);
  });
});

describe("CountingTokenCounter", () => {
  it("counts calls and delegates the results", () => {
    const inner = new FakeTokenCounter();
    const counting = new CountingTokenCounter(inner);
    expect(counting.name).toBe(inner.name);
    expect(counting.countText("abcdefgh")).toBe(2);
    expect(counting.countMessage(history[0]!)).toBe(inner.countMessage(history[0]!));
    expect(counting).toMatchObject({ textCalls: 1, messageCalls: 1, invocations: 2 });
  });
});
