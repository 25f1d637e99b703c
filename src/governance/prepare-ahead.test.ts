// The offload of outputs that left the protection window is prepared ahead, a couple per request: the checkpoint
// that offloads them finds their replacements made and counted, and preparing stores nothing and changes nothing.
import { describe, expect, it } from "vitest";
import { sequentialIds } from "../model/ids.ts";
import type { Message } from "../model/message.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import { createGovernor } from "./governor.ts";
import { resolveGovernorSettings } from "./governor-settings.ts";
import { MessageTokenCache } from "./message-token-cache.ts";
import { MemoryOffloadStore, type OffloadStore } from "./offload-store.ts";
import { createPipeline } from "./pipeline.ts";
import type { ProcessorContext } from "./processor.ts";
import { createOffloadToolOutputs } from "./processors/tool-output-offload.ts";

const output = (label: string) =>
  Array.from({ length: 300 }, (_, line) => `${label} line ${line}: const value${line} = ${line};`).join("\n");

/** One turn of `steps` steps, each reading a big file. */
function session(steps: number): Message[] {
  const builder = new HistoryBuilder().user("read the logs");
  for (let step = 0; step < steps; step++) {
    builder.step([{ name: "bash", input: { command: `cat ${step}.log` }, output: output(`log ${step}`) }]);
  }
  return builder.build();
}

/** A store that counts what it is given, naming outputs as the memory store does. */
class CountingStore implements OffloadStore {
  readonly inner = new MemoryOffloadStore();
  puts = 0;
  putText(content: string): Promise<string> {
    this.puts++;
    return this.inner.putText(content);
  }
  getText(ref: string): Promise<string | undefined> {
    return this.inner.getText(ref);
  }
  refFor(content: string): string {
    return this.inner.refFor(content);
  }
}

function context(
  counter: FakeTokenCounter,
  offloadStore: OffloadStore,
  protectTokens: number,
): ProcessorContext {
  return {
    settings: resolveGovernorSettings({ groundingTarget: 0, protectTokens }),
    window: { contextWindow: 1_000_000, reservedOutput: 4_000, usable: 996_000 },
    fixedTokens: 0,
    tokensOf: new MessageTokenCache(counter).tokensOf,
    summarizer: new FakeSummarizer(),
    offloadStore,
    guard: {},
    force: false,
    ids: sequentialIds(),
    clock: () => new Date("2026-01-01T00:00:00Z"),
    emit: () => undefined,
  };
}

describe("preparing offloads ahead", () => {
  it("makes and counts, a couple per request, the replacements a checkpoint then reuses; stores nothing", async () => {
    const counter = new FakeTokenCounter();
    const store = new CountingStore();
    const messages = session(6);
    const perOutput = counter.countMessage(messages.find((message) => message.role === "tool")!);
    // The newest step's output and the two before it are protected; the three before them have left the window.
    const value = context(counter, store, perOutput * 2);
    const processor = createOffloadToolOutputs({ minPrunableTokens: 100 });
    const before = [...messages];
    const startCalls = counter.calls;
    await processor.prepareAhead!(messages, value);
    expect(messages).toEqual(before);
    expect(store.puts).toBe(0);
    expect(counter.calls).toBeGreaterThan(startCalls);
    const firstCalls = counter.calls;
    await processor.prepareAhead!(messages, value);
    // Two made and counted on the first request, the third on the second; a third request finds nothing to do.
    expect(counter.calls).toBeGreaterThan(firstCalls);
    const secondCalls = counter.calls;
    await processor.prepareAhead!(messages, value);
    expect(counter.calls).toBe(secondCalls);

    const folded = await processor.process(messages, value);
    const offloaded = folded.filter((message, index) => message !== messages[index]);
    expect(offloaded).toHaveLength(3);
    for (const message of offloaded) value.tokensOf(message);
    // Every replacement was made and counted ahead: the checkpoint counted nothing.
    expect(counter.calls).toBe(secondCalls);
    expect(store.puts).toBe(3);
  });

  it("does nothing with a store that cannot name an output before storing it", async () => {
    const counter = new FakeTokenCounter();
    const inner = new MemoryOffloadStore();
    const store: OffloadStore = {
      putText: (text) => inner.putText(text),
      getText: (ref) => inner.getText(ref),
    };
    const messages = session(4);
    const value = context(counter, store, 1);
    const processor = createOffloadToolOutputs({ minPrunableTokens: 100 });
    await processor.prepareAhead!(messages, value);
    const calls = counter.calls;
    const folded = await processor.process(messages, value);
    for (const message of folded) value.tokensOf(message);
    // The checkpoint made and counted its replacements itself.
    expect(counter.calls).toBeGreaterThan(calls);
  });

  it("leaves a governor's requests as they were: the same view with and without preparing ahead", async () => {
    const history = session(12);
    const run = async (ahead: boolean) => {
      const offload = createOffloadToolOutputs({ minPrunableTokens: 2_000 });
      const processor = ahead ? offload : { ...offload, prepareAhead: undefined };
      const governor = createGovernor({
        contextWindow: 60_000,
        reservedOutputTokens: 4_000,
        counter: new FakeTokenCounter(),
        summarizer: new FakeSummarizer(),
        ids: sequentialIds(),
        pipeline: createPipeline({ processors: [processor], settings: { protectTokens: 3_000 } }),
      });
      const views: string[] = [];
      for (let length = 4; length <= history.length; length++) {
        const request = await governor.prepare(history.slice(0, length));
        views.push(JSON.stringify(request.messages));
      }
      return views;
    };
    const [with_, without] = [await run(true), await run(false)];
    expect(with_).toEqual(without);
    expect(with_.some((view) => view.includes("output offloaded"))).toBe(true);
  });
});
