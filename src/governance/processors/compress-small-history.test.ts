import { describe, expect, it } from "vitest";
import { messageText } from "../../model/blocks.ts";
import { sequentialIds } from "../../model/ids.ts";
import type { Message } from "../../model/message.ts";
import { FakeSummarizer } from "../../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../../test/fake-token-counter.ts";
import { HistoryBuilder } from "../../test/history-builder.ts";
import type { GovernanceEvent } from "../events.ts";
import type { ProcessorContext } from "../processor.ts";
import { resolveGovernorSettings } from "../governor-settings.ts";
import { preset } from "../presets.ts";
import { createCompressSmallHistory } from "./compress-small-history.ts";

const compressSmallHistory = createCompressSmallHistory({ belowTurns: 5, trigger: 0.8 });

function context(options: { usable: number; force?: boolean }) {
  const counter = new FakeTokenCounter();
  const events: GovernanceEvent[] = [];
  const value = {
    settings: resolveGovernorSettings(),
    window: { contextWindow: options.usable + 1_000, reservedOutput: 1_000, usable: options.usable },
    fixedTokens: 0,
    tokensOf: (message: Message) => counter.countMessage(message),
    summarizer: new FakeSummarizer(),
    guard: {},
    force: options.force ?? false,
    ids: sequentialIds(),
    clock: () => new Date("2026-01-01T00:00:00Z"),
    emit: (event) => events.push(event),
  } satisfies ProcessorContext;
  return { context: value, events };
}

/** The CowAgent seed's short history: few turns, each a tool-call chain with big results, then a reply. */
function shortHistory(): Message[] {
  const output = (label: string) => `${label}\n${"data ".repeat(2_000)}`;
  return new HistoryBuilder()
    .system("You are a helpful agent.")
    .user("find the config")
    .step([{ name: "search", input: { query: "config" }, output: output("config.json found") }])
    .step([{ name: "read", input: { path: "config.json" }, output: output("{ ... }") }], "Reading it.")
    .reply("The config is in config.json.")
    .user("what port does it use?")
    .step([{ name: "read", input: { path: "config.json" }, output: output('"port": 8080') }])
    .reply("Port 8080.")
    .user("change it to 9090")
    .step([{ name: "edit", input: { path: "config.json" }, output: output("edited") }])
    .build();
}

describe("compressSmallHistory", () => {
  it("over budget with fewer than 5 turns: each earlier turn keeps its first user text and final reply", async () => {
    const history = shortHistory();
    const { context: processorContext, events } = context({ usable: 10_000 });
    const output = await compressSmallHistory.process(history, processorContext);
    const current = history.slice(history.findLastIndex((message) => message.role === "user"));
    expect(output.map((message) => [message.role, messageText(message)])).toEqual([
      ["system", "You are a helpful agent."],
      ["user", "find the config"],
      ["assistant", "The config is in config.json."],
      ["user", "what port does it use?"],
      ["assistant", "Port 8080."],
      ...current.map((message) => [message.role, messageText(message)]),
    ]);
    // The current turn is untouched: the same objects, tool chain and all.
    expect(output.slice(-current.length)).toEqual(current);
    expect(output.slice(-current.length).every((message, index) => message === current[index])).toBe(true);
    const [event] = events;
    expect(event).toMatchObject({ type: "small-history-compressed" });
    expect(event!.messageIds).toHaveLength(6); // 2 steps with 2 results, 1 step with 1 result
    expect(event!.tokensAfter).toBeLessThan(event!.tokensBefore / 2);
  });

  it("keeps only the text of a final reply that also called tools", async () => {
    const history = new HistoryBuilder()
      .user("list and explain")
      .step([{ name: "ls", output: "a.ts\n".repeat(3_000) }], "Here is the listing.")
      .user("thanks")
      .build();
    const output = await compressSmallHistory.process(history, context({ usable: 1_000 }).context);
    expect(output.map((message) => message.content.map((block) => block.type))).toEqual([
      ["text"],
      ["text"],
      ["text"],
    ]);
    expect(messageText(output[1]!)).toBe("Here is the listing.");
  });

  it("leaves the history alone under the trigger, with 5 turns or more, or with a single turn", async () => {
    const history = shortHistory();
    expect(await compressSmallHistory.process(history, context({ usable: 1_000_000 }).context)).toBe(history);
    const forced = context({ usable: 1_000_000, force: true });
    expect(await compressSmallHistory.process(history, forced.context)).not.toBe(history);
    const long = new HistoryBuilder();
    for (let turn = 0; turn < 5; turn++)
      long
        .user(`turn ${turn}`)
        .step([{ name: "read", output: "x ".repeat(2_000) }])
        .reply("ok");
    const five = long.build();
    expect(await compressSmallHistory.process(five, context({ usable: 1_000 }).context)).toBe(five);
    const single = new HistoryBuilder()
      .user("one")
      .step([{ name: "read", output: "x ".repeat(9_000) }])
      .build();
    expect(await compressSmallHistory.process(single, context({ usable: 1_000 }).context)).toBe(single);
    // smallHistoryTurns 0 leaves the processor out of the preset's pipeline.
    const names = preset("default", { smallHistoryTurns: 0 }).processors.map((processor) => processor.name);
    expect(names).not.toContain("compress-small-history");
  });
});
