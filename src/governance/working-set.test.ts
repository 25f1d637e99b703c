import { describe, expect, it } from "vitest";
import type { Message } from "../model/message.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import { cacheProfiles } from "../pricing/cache-profile.ts";
import type { CachePricing } from "./cache-economics.ts";
import { workingSet, type WorkingSetOptions } from "./working-set.ts";

const counter = new FakeTokenCounter();
const tokensOf = (message: Message) => counter.countMessage(message);
/** About `tokens` tokens of file content (4 characters a token). */
const file = (name: string, tokens: number) => `// ${name}\n${"x".repeat(tokens * 4)}`;

function options(overrides: Partial<WorkingSetOptions> = {}): WorkingSetOptions {
  return {
    pricing: cacheProfiles.anthropic,
    payloadTokens: 40_000,
    budget: 16_000,
    protectedFrom: Number.POSITIVE_INFINITY,
    ...overrides,
  };
}

/** The index of the tool message answering the call that read `path`. */
function readOf(messages: readonly Message[], path: string): number {
  const call = messages.findIndex((message) =>
    message.content.some(
      (block) => block.type === "tool-call" && (block.input as { file_path?: string }).file_path === path,
    ),
  );
  return call + 1;
}

describe("workingSet", () => {
  it("keeps the read of a file the agent goes on editing, not the edits' confirmations", () => {
    const messages = new HistoryBuilder()
      .user("rename the parser")
      .step([{ name: "Read", input: { file_path: "src/parser.ts" }, output: file("parser", 2_000) }])
      .step([
        {
          name: "Edit",
          input: { file_path: "src/parser.ts", old_string: "a", new_string: "b" },
          output: `The file src/parser.ts has been updated.\n${"  12→ const b = 1;\n".repeat(40)}`,
        },
      ])
      .step([{ name: "Bash", input: { command: "npm test" }, output: "ok" }])
      .build();
    const kept = workingSet(messages, tokensOf, options());
    expect([...kept]).toEqual([readOf(messages, "src/parser.ts")]);
  });

  it("lets an output go once the rent paid outweighs the chance of reading it again", () => {
    const keptAfter = (
      idleSteps: number,
      pricing: CachePricing = cacheProfiles.anthropic,
      tokens = 4_000,
    ) => {
      const builder = new HistoryBuilder()
        .user("look around")
        .step([{ name: "Read", input: { file_path: "src/big.ts" }, output: file("big", tokens) }]);
      for (let step = 0; step < idleSteps; step++)
        builder.step([{ name: "Bash", input: { command: `ls dir${step}` }, output: "a\nb" }]);
      const messages = builder.build();
      return workingSet(messages, tokensOf, options({ pricing })).has(readOf(messages, "src/big.ts"));
    };
    // Anthropic: rent about 400 a request; reading again 40,000 × 0.1 + 4,000 × 1.25 ≈ 9,000, needed again with
    // a chance of 0.15 / (idle + 1): kept while 400 × (idle + 1) ≤ 0.15 × 9,000 ≈ 1,350, up to 2 idle steps.
    expect(keptAfter(2)).toBe(true);
    expect(keptAfter(3)).toBe(false);
    // Where cached reads cost half the input price (GPT-4o), keeping is dearer and the file goes sooner: rent about
    // 2,000; reading again 40,000 × 0.5 + 4,000 = 24,000, times 0.15 = 3,600: only while it is idle no step.
    const halfPriceReads = { read: 0.5, write: 1 };
    expect(keptAfter(0, halfPriceReads)).toBe(true);
    expect(keptAfter(1, halfPriceReads)).toBe(false);
    // A small file costs little rent: kept far longer (about 50 a request against 0.15 × 4,600 ≈ 690).
    expect(keptAfter(12, cacheProfiles.anthropic, 500)).toBe(true);
    expect(keptAfter(13, cacheProfiles.anthropic, 500)).toBe(false);
  });

  it("treats a file whose newest read was offloaded as seen: an older verbatim read would be stale", () => {
    const builder = new HistoryBuilder()
      .user("check the config")
      .step([{ name: "Read", input: { file_path: "config.json" }, output: file("v1", 1_000) }])
      .step([{ name: "Read", input: { file_path: "config.json" }, output: file("v2", 1_000) }]);
    const messages = builder.build();
    const newest = messages.length - 1;
    const offloaded = messages.map((message, index) =>
      index !== newest
        ? message
        : {
            ...message,
            content: message.content.map((block) =>
              block.type === "tool-result" ? { ...block, content: "// v2 …", offloadRef: "blob:1" } : block,
            ),
          },
    );
    expect(workingSet(messages, tokensOf, options()).has(newest)).toBe(true);
    expect(workingSet(offloaded, tokensOf, options()).size).toBe(0);
  });

  it("keeps the most recently touched files first, within the budget, and leaves protected outputs out of it", () => {
    const messages = new HistoryBuilder()
      .user("compare")
      .step([{ name: "Read", input: { file_path: "a.ts" }, output: file("a", 3_000) }])
      .step([{ name: "Read", input: { file_path: "b.ts" }, output: file("b", 3_000) }])
      .step([{ name: "Read", input: { file_path: "c.ts" }, output: file("c", 3_000) }])
      .build();
    const [a, b, c] = ["a.ts", "b.ts", "c.ts"].map((path) => readOf(messages, path)) as [
      number,
      number,
      number,
    ];
    const kept = (overrides: Partial<WorkingSetOptions>) =>
      [...workingSet(messages, tokensOf, options(overrides))].sort((x, y) => x - y);
    expect(kept({ budget: 6_100 })).toEqual([b, c]);
    // c.ts is the newest step, protected anyway: it does not use the budget.
    expect(kept({ budget: 6_100, protectedFrom: c })).toEqual([a, b]);
    expect(workingSet(messages, tokensOf, options({ budget: 0 })).size).toBe(0);
  });

  it("ignores outputs too small to be worth keeping and calls that target several files", () => {
    const messages = new HistoryBuilder()
      .user("scan")
      .step([{ name: "Read", input: { file_path: "tiny.ts" }, output: "export {};" }])
      .step([{ name: "Bash", input: { command: "cat a.ts b.ts" }, output: file("both", 2_000) }])
      .build();
    expect(workingSet(messages, tokensOf, options()).size).toBe(0);
  });
});
