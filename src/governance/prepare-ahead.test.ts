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
import { processorContext } from "./processor-context.test-helpers.ts";
import { MemoryOffloadStore, type OffloadStore } from "./offload-store.ts";
import { createPipeline } from "./pipeline.ts";
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

describe("preparing checkpoint work ahead", () => {
  it("makes a couple of offloads per request, which the checkpoint then reuses; stores nothing", async () => {
    const counter = new FakeTokenCounter();
    const store = new CountingStore();
    const messages = session(6);
    const perOutput = counter.countMessage(messages.find((message) => message.role === "tool")!);
    // The newest step's output and the two before it are protected; the three before them have left the window.
    const value = processorContext(counter, store, {
      protectTokens: perOutput * 2,
      contextWindow: 1_000_000,
    });
    const processor = createOffloadToolOutputs({ minPrunableTokens: 100 });
    const before = [...messages];
    const made = [
      ...(await processor.prepareAhead!(messages, value)),
      ...(await processor.prepareAhead!(messages, value)),
    ];
    expect(made).toHaveLength(3);
    expect(await processor.prepareAhead!(messages, value)).toEqual([]);
    expect(messages).toEqual(before);
    expect(store.puts).toBe(0);
    for (const message of made) value.tokensOf(message);
    const calls = counter.calls;

    const folded = await processor.process(messages, value);
    const offloaded = folded.filter((message, index) => message !== messages[index]);
    expect(offloaded).toHaveLength(3);
    // The very objects made ahead: counted already, so the checkpoint counts nothing.
    for (const message of offloaded) expect(made).toContain(message);
    for (const message of offloaded) value.tokensOf(message);
    expect(counter.calls).toBe(calls);
    expect(store.puts).toBe(3);
  });

  it("makes the first request's two only: the limit per request holds", async () => {
    const counter = new FakeTokenCounter();
    const messages = session(8);
    const value = processorContext(counter, new CountingStore(), {
      protectTokens: 1,
      contextWindow: 1_000_000,
    });
    const processor = createOffloadToolOutputs({ minPrunableTokens: 100 });
    expect(await processor.prepareAhead!(messages, value)).toHaveLength(2);
    expect(await processor.prepareAhead!(messages, value)).toHaveLength(2);
  });

  it("leaves the work to the checkpoint with a store that cannot name a text before storing it", async () => {
    const counter = new FakeTokenCounter();
    const inner = new MemoryOffloadStore();
    const store: OffloadStore = {
      putText: (text) => inner.putText(text),
      getText: (ref) => inner.getText(ref),
    };
    const value = processorContext(counter, store, { protectTokens: 1, contextWindow: 1_000_000 });
    expect(
      await createOffloadToolOutputs({ minPrunableTokens: 100 }).prepareAhead!(session(4), value),
    ).toEqual([]);
    expect(await createElideOlderToolInputs({ aboveTokens: 250 }).prepareAhead!(written(), value)).toEqual(
      [],
    );
  });

  it("makes anew at the checkpoint what the store names differently than it said it would", async () => {
    const counter = new FakeTokenCounter();
    const inner = new MemoryOffloadStore();
    const store: OffloadStore = {
      putText: (text) => inner.putText(text),
      getText: (ref) => inner.getText(ref),
      refFor: () => "blob:promised",
    };
    const messages = session(4);
    const value = processorContext(counter, store, { protectTokens: 1, contextWindow: 1_000_000 });
    const processor = createOffloadToolOutputs({ minPrunableTokens: 100 });
    const made = await processor.prepareAhead!(messages, value);
    expect(made.length).toBeGreaterThan(0);
    const folded = await processor.process(messages, value);
    const offloaded = folded.filter((message, index) => message !== messages[index]);
    for (const message of offloaded) {
      expect(made).not.toContain(message);
      expect(JSON.stringify(message)).not.toContain("blob:promised");
    }
  });

  it("strips new reasoning as it arrives; the checkpoint after its turn reuses it", async () => {
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
    const value = processorContext(counter, new MemoryOffloadStore(), {
      protectTokens: 1_000,
      contextWindow: 1_000_000,
    });
    const made = await processor.prepareAhead!(first, value);
    expect(made).toHaveLength(1);
    expect(made[0]!.content).toEqual([{ type: "text", text: "Here is the plan." }]);
    expect(await processor.prepareAhead!(first, value)).toEqual([]);
    const messages = [...first, ...new HistoryBuilder().user("go on").build()];
    const folded = await processor.process(messages, value);
    expect(folded[1]).toBe(made[0]);
  });

  it("elides a written file's text once its call left the window: made ahead, reused, nothing stored", async () => {
    const counter = new FakeTokenCounter();
    const store = new CountingStore();
    const messages = written();
    // The test run's output fills the window: the write before it is out.
    const value = processorContext(counter, store, {
      protectTokens: counter.countMessage(messages.at(-3)!) - 1,
      contextWindow: 1_000_000,
    });
    const processor = createElideOlderToolInputs({ aboveTokens: 250 });
    const made = await processor.prepareAhead!(messages, value);
    expect(made).toHaveLength(1);
    expect(JSON.stringify(made[0])).toContain("argument elided");
    expect(store.puts).toBe(0);
    const folded = await processor.process(messages, value);
    const elided = folded.filter((message, index) => message !== messages[index]);
    expect(elided).toEqual([made[0]]);
    expect(elided[0]).toBe(made[0]);
    expect(store.puts).toBe(1);
  });

  it("never fails a request: a processor whose work ahead throws leaves it to the checkpoint", async () => {
    const history = mixedSession();
    const offload = createOffloadToolOutputs({ minPrunableTokens: 2_000 });
    const failing = {
      ...offload,
      prepareAhead: () => {
        throw new Error("ahead failed");
      },
    };
    const [withFailure, without] = [await views(history, [failing]), await views(history, [offload])];
    expect(withFailure).toEqual(without);
  });

  it("does nothing ahead on a request prepared again with nothing new: it tokenises nothing", async () => {
    const counter = new FakeTokenCounter();
    const governor = createGovernor({
      contextWindow: 60_000,
      reservedOutputTokens: 4_000,
      counter,
      summarizer: new FakeSummarizer(),
      ids: sequentialIds(),
      pipeline: createPipeline({
        processors: [
          createOffloadToolOutputs({ minPrunableTokens: 2_000 }),
          createElideOlderToolInputs({ aboveTokens: 250 }),
        ],
        settings: { protectTokens: 3_000 },
      }),
    });
    // Six outputs leave the protection window at once: more than one request's share of work ahead.
    const builder = new HistoryBuilder().user("read the logs");
    builder.step(
      Array.from({ length: 6 }, (_, step) => ({
        name: "bash",
        input: { command: `cat ${step}.log` },
        output: output(`log ${step}`),
      })),
    );
    const history = builder.step([{ name: "bash", input: { command: "ls" }, output: "a.log" }]).build();
    await governor.prepare(history.slice(0, 1));
    await governor.prepare(history);
    const afterFirst = counter.calls;
    // Prepared again (a retry): the outputs not prepared yet wait for the next request that brings something.
    const again = await governor.prepare(history);
    expect(counter.calls).toBe(afterFirst);
    expect(again.checkpoint).toBe(false);
  });

  for (const recall of [true, false]) {
    it(`leaves a governor's requests as they were (recall ${recall ? "on" : "off"}): the same views with and without preparing ahead`, async () => {
      const history = mixedSession();
      const processors = () => [
        createStripOlderReasoning(),
        createOffloadToolOutputs({ minPrunableTokens: 2_000 }),
        createElideOlderToolInputs({ aboveTokens: 250 }),
      ];
      const ahead = await views(history, processors(), recall);
      const none = await views(
        history,
        processors().map((processor) => ({ ...processor, prepareAhead: undefined })),
        recall,
      );
      expect(ahead).toEqual(none);
      // Both rewrites prepared ahead happened along the way.
      expect(ahead.some((view) => view.includes("output offloaded"))).toBe(true);
      expect(ahead.some((view) => view.includes("argument elided"))).toBe(true);
    });
  }
});

/** A write of a long file, a test run with a big output, then a small step. */
function written(): Message[] {
  return new HistoryBuilder()
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
}

/** Reasoning, a file write and twelve big reads in one turn, then the next turn. */
function mixedSession(): Message[] {
  const builder = new HistoryBuilder()
    .user("read and write")
    .message({ role: "assistant", content: [{ type: "reasoning", text: "think ".repeat(300) }] })
    .step([{ name: "Write", input: { file_path: "a.ts", content: output("a") }, output: "written" }]);
  for (let step = 0; step < 12; step++) {
    builder.step([{ name: "bash", input: { command: `cat ${step}.log` }, output: output(`log ${step}`) }]);
  }
  return builder.user("next").build();
}

/** The messages a governor sends for every prefix of `history`, as JSON. */
async function views(history: readonly Message[], processors: Processor[], recall = true): Promise<string[]> {
  const governor = createGovernor({
    contextWindow: 60_000,
    reservedOutputTokens: 4_000,
    counter: new FakeTokenCounter(),
    summarizer: new FakeSummarizer(),
    ids: sequentialIds(),
    recall,
    // The needed pieces held to the tail share: this small session offloads and elides along the way.
    pipeline: createPipeline({ processors, settings: { protectTokens: 3_000, neededShare: 0 } }),
  });
  const sent: string[] = [];
  for (let length = 4; length <= history.length; length++) {
    const request = await governor.prepare(history.slice(0, length));
    sent.push(JSON.stringify(request.messages));
  }
  return sent;
}
