// A fold run again over the same messages (an optional checkpoint thrown away as not paying, considered again a
// few requests later) gets the same replacement objects back: nothing is rebuilt, and a governor, which counts
// each message object once, counts nothing again.
import { describe, expect, it } from "vitest";
import type { Message } from "../model/message.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import { processorContext } from "./processor-context.test-helpers.ts";
import { MemoryOffloadStore, type OffloadStore } from "./offload-store.ts";
import { runPipeline, sumTokens } from "./processor.ts";
import { createElideOlderToolInputs } from "./processors/elide-older-tool-inputs.ts";
import { createStripOlderReasoning } from "./processors/strip-older-reasoning.ts";
import { createOffloadToolOutputs } from "./processors/tool-output-offload.ts";
import { createTruncateToolResults } from "./processors/truncate-tool-results.ts";
import { RewriteMemo } from "./rewrite-memo.ts";
import { withContent } from "./rewrite.ts";

const lines = (label: string, count: number) =>
  Array.from({ length: count }, (_, line) => `${label} line ${line}: const value${line} = ${line};`).join(
    "\n",
  );

/** Two turns of steps: reasoning, big outputs and a big file write in the first, one small step in the current. */
function session(): Message[] {
  return new HistoryBuilder()
    .user("write the parser")
    .message({ role: "assistant", content: [{ type: "reasoning", text: "think ".repeat(200) }] })
    .step([{ name: "bash", input: { command: "cat a.log" }, output: lines("a", 400) }])
    .step([{ name: "bash", input: { command: "cat b.log" }, output: lines("b", 400) }])
    .step([
      {
        name: "Write",
        input: { file_path: "src/parser.ts", content: lines("parser", 200) },
        output: "File created successfully at: src/parser.ts",
      },
    ])
    .user("now the tests")
    .step([{ name: "bash", input: { command: "npm test" }, output: "ok" }])
    .build();
}

const fold = () => [
  createStripOlderReasoning(),
  createOffloadToolOutputs({ minPrunableTokens: 500 }),
  createElideOlderToolInputs({ aboveTokens: 250 }),
  createTruncateToolResults({ aboveTokens: 50 }),
];

describe("a fold run again over the same messages", () => {
  it("returns the same replacements, counting none of them again", async () => {
    const counter = new FakeTokenCounter();
    const processors = fold();
    const messages = session();
    const value = processorContext(counter, new MemoryOffloadStore());
    const first = await runPipeline(processors, messages, value);
    const changed = first.filter((message, index) => message !== messages[index]);
    // Reasoning stripped, both outputs offloaded, the write's content elided (the first turn only).
    expect(changed.length).toBeGreaterThanOrEqual(3);
    sumTokens(first, value.tokensOf);
    const calls = counter.calls;
    const second = await runPipeline(processors, messages, value);
    expect(second).toHaveLength(first.length);
    second.forEach((message, index) => expect(message).toBe(first[index]));
    sumTokens(second, value.tokensOf);
    expect(counter.calls).toBe(calls);
  });

  it("makes a replacement anew when what it depends on changed: another reference, another message", async () => {
    const counter = new FakeTokenCounter();
    const messages = session();
    const processors = fold();
    const first = await runPipeline(
      processors,
      messages,
      processorContext(counter, new MemoryOffloadStore()),
    );
    // A store that names the same output differently: the notices carry its references.
    let stored = 0;
    const other: OffloadStore = {
      putText: async () => `other:${stored++}`,
      getText: async () => undefined,
    };
    const second = await runPipeline(processors, messages, processorContext(counter, other));
    const offloaded = first.findIndex(
      (message, index) => message !== messages[index] && message.role === "tool",
    );
    expect(second[offloaded]).not.toBe(first[offloaded]);
    expect(JSON.stringify(second[offloaded])).toContain("other:");
  });

  it("is keyed by the message object and what else went into it", () => {
    const memo = new RewriteMemo();
    const [message] = session();
    const replacement = withContent(message!, [{ type: "text", text: "short" }]);
    expect(memo.set(message!, replacement, "ref-1")).toBe(replacement);
    expect(memo.get(message!, "ref-1")).toBe(replacement);
    expect(memo.get(message!, "ref-2")).toBeUndefined();
    expect(memo.get({ ...message! }, "ref-1")).toBeUndefined();
  });
});
