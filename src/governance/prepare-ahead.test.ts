// What a checkpoint will rewrite is prepared ahead, a little per request: the offload of outputs and the elision of
// written files' text that left the protection window, the stripping of new reasoning. The checkpoint then finds
// the replacements made and counted; preparing stores nothing and changes no view.
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
import { createElideOlderToolInputs } from "./processors/elide-older-tool-inputs.ts";
import { createStripOlderReasoning } from "./processors/strip-older-reasoning.ts";
import { createOffloadToolOutputs } from "./processors/tool-output-offload.ts";
import type { Processor } from "./processor.ts";

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

  it("strips new reasoning as it arrives; the checkpoint after its turn counts nothing", async () => {
    const counter = new FakeTokenCounter();
    const processor = createStripOlderReasoning();
    const first = new HistoryBuilder()
      .user("plan it")
      .message({
        role: "assistant",
        content: [
          { type: "reasoning", text: "weigh the options ".repeat(50) },
          { type: "text", text: "Here is the plan." },
        ],
      })
      .build();
    const value = context(counter, new MemoryOffloadStore(), 1_000);
    for (const message of first) value.tokensOf(message);
    const before = counter.calls;
    await processor.prepareAhead!(first, value);
    expect(counter.calls).toBe(before + 1);
    const messages = [...first, ...new HistoryBuilder().user("go on").build()];
    const folded = await processor.process(messages, value);
    expect(folded[1]).not.toBe(messages[1]);
    expect(folded[1]!.content).toEqual([{ type: "text", text: "Here is the plan." }]);
    for (const message of folded) value.tokensOf(message);
    expect(counter.calls).toBe(before + 2); // the new user message only
  });

  it("elides a written file's text once its call left the window: made ahead, reused, nothing stored", async () => {
    const counter = new FakeTokenCounter();
    const store = new CountingStore();
    const messages = new HistoryBuilder()
      .user("write the parser")
      .step([
        {
          name: "Write",
          input: { file_path: "src/parser.ts", content: output("parser") },
          output: "File created successfully at: src/parser.ts",
        },
      ])
      .step([{ name: "bash", input: { command: "npm test" }, output: output("test") }])
      .step([{ name: "bash", input: { command: "git status" }, output: "clean" }])
      .build();
    // The test run's output fills the window: the write before it is out.
    const value = context(counter, store, counter.countMessage(messages.at(-3)!) - 1);
    const processor = createElideOlderToolInputs({ aboveTokens: 250 });
    for (const message of messages) value.tokensOf(message);
    const before = counter.calls;
    await processor.prepareAhead!(messages, value);
    expect(counter.calls).toBeGreaterThan(before);
    expect(store.puts).toBe(0);
    const prepared = counter.calls;
    const folded = await processor.process(messages, value);
    const elided = folded.filter((message, index) => message !== messages[index]);
    expect(elided).toHaveLength(1);
    expect(JSON.stringify(elided[0])).toContain("argument elided");
    for (const message of elided) value.tokensOf(message);
    expect(counter.calls).toBe(prepared);
    expect(store.puts).toBe(1);
  });

  it("leaves a governor's requests as they were: the same view with and without preparing ahead", async () => {
    const builder = new HistoryBuilder()
      .user("read and write")
      .message({ role: "assistant", content: [{ type: "reasoning", text: "think ".repeat(300) }] })
      .step([{ name: "Write", input: { file_path: "a.ts", content: output("a") }, output: "written" }]);
    for (let step = 0; step < 12; step++) {
      builder.step([{ name: "bash", input: { command: `cat ${step}.log` }, output: output(`log ${step}`) }]);
    }
    const history = builder.user("next").build();
    const run = async (ahead: boolean) => {
      const processors: Processor[] = [
        createStripOlderReasoning(),
        createOffloadToolOutputs({ minPrunableTokens: 2_000 }),
        createElideOlderToolInputs({ aboveTokens: 250 }),
      ].map((processor) => (ahead ? processor : { ...processor, prepareAhead: undefined }));
      const governor = createGovernor({
        contextWindow: 60_000,
        reservedOutputTokens: 4_000,
        counter: new FakeTokenCounter(),
        summarizer: new FakeSummarizer(),
        ids: sequentialIds(),
        pipeline: createPipeline({ processors, settings: { protectTokens: 3_000 } }),
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
    // Both rewrites prepared ahead happened along the way.
    expect(with_.some((view) => view.includes("output offloaded"))).toBe(true);
    expect(with_.some((view) => view.includes("argument elided"))).toBe(true);
  });
});
