import { describe, expect, it } from "vitest";
import { messageText } from "../../model/blocks.ts";
import { sequentialIds } from "../../model/ids.ts";
import type { Message } from "../../model/message.ts";
import { FakeSummarizer } from "../../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../../test/fake-token-counter.ts";
import { HistoryBuilder } from "../../test/history-builder.ts";
import type { GovernanceEvent } from "../events.ts";
import { createGovernor } from "../governor.ts";
import type { PresetOptionsInput } from "../preset-options.ts";
import { preset } from "../presets.ts";

function governor(knobs: PresetOptionsInput = {}) {
  const events: GovernanceEvent[] = [];
  const summarizer = new FakeSummarizer({
    respond: (request) => `${request.messages.length} messages about tabs`,
  });
  const instance = createGovernor({
    contextWindow: 200_000,
    counter: new FakeTokenCounter(),
    summarizer,
    pipeline: preset("default", knobs),
    ids: sequentialIds(),
    clock: () => new Date("2026-01-01T00:00:00Z"),
    onEvent: (event) => events.push(event),
  });
  return { instance, events, summarizer };
}

/** A short chat, far below any token threshold. */
function chat(exchanges: number): Message[] {
  const builder = new HistoryBuilder().system("You are co.");
  for (let index = 1; index <= exchanges; index++)
    builder
      .user(`question ${index} about tabs and spaces`)
      .reply(`answer ${index}: use what the project uses`);
  return builder.build();
}

describe("compactHistory", () => {
  it("co-cli's /compact: a short history becomes the summary and the last exchange, whatever the window says", async () => {
    const history = chat(3);
    const { instance, summarizer } = governor();
    expect((await instance.prepare(history)).checkpoint).toBe(false);
    const events = await instance.compact();
    expect(events.map((event) => event.type)).toEqual(["compaction-start", "compaction-end"]);
    expect(events[0]!.type === "compaction-start" && events[0]!.reason).toBe("requested by the user");
    expect(instance.view.map((message) => message.kind ?? message.role)).toEqual([
      "system",
      "summary",
      "user",
      "assistant",
    ]);
    expect(messageText(instance.view[1]!)).toMatch(
      /^\[Summary of 4 earlier messages[^\n]*\]\n4 messages about tabs$/,
    );
    expect(instance.view.slice(2)).toEqual(history.slice(-2));
    expect(summarizer.requests).toHaveLength(1);
  });

  it("co-cli's /compact always compacts, even when the summary is no smaller than a tiny history", async () => {
    const history = new HistoryBuilder().user("hi").reply("hello").user("ok").reply("bye").build();
    const { instance } = governor();
    await instance.prepare(history);
    const events = await instance.compact();
    expect(events.map((event) => event.type)).toContain("compaction-end");
    expect(instance.view.map((message) => message.kind ?? messageText(message))).toEqual([
      "summary",
      "ok",
      "bye",
    ]);
  });

  it("compactAboveMessages: past N messages the history is compacted, keeping the recent turns", async () => {
    const { instance, events } = governor({ compactAboveMessages: 10 });
    const history = chat(5); // 11 messages
    expect((await instance.prepare(history.slice(0, 9))).messages).toHaveLength(9);
    expect(events.map((event) => event.type)).not.toContain("compaction-start");
    const request = await instance.prepare(history);
    expect(request.checkpoint).toBe(true);
    const start = events.find((event) => event.type === "compaction-start");
    expect(start?.type === "compaction-start" && start.reason).toBe("the history passed 10 messages");
    expect(request.messages.length).toBeLessThanOrEqual(10);
    expect(request.messages.filter((message) => message.kind === "summary")).toHaveLength(1);
    // The newest two turns (minTailTurns) are kept as they were.
    expect(request.messages.slice(-4)).toEqual(history.slice(-4));

    const off = governor({ compactAboveMessages: 0 });
    const untouched = await off.instance.prepare(chat(30));
    expect(untouched.checkpoint).toBe(false);
    expect(untouched.messages).toHaveLength(61);
  });
});
