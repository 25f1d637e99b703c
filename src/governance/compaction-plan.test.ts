import { describe, expect, it } from "vitest";
import { HistoryBuilder } from "../test/history-builder.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { headAnchorEnd, planCompaction } from "./compaction-plan.ts";

const counter = new FakeTokenCounter();
const tokensOf = counter.countMessage.bind(counter);

/** A session whose first run reads `firstReadLines` lines of source, then five more small turns. */
function session(firstReadLines: number) {
  const builder = new HistoryBuilder()
    .system("You are a coding agent.")
    .user("Port the recorder to the Web Audio API")
    .step([{ name: "read", input: { path: "recorder.js" }, output: "let x = 1;\n".repeat(firstReadLines) }])
    .reply("Read it.");
  for (let turn = 2; turn <= 6; turn++) builder.user(`Step ${turn}`).reply(`Done ${turn}.`);
  return builder.build();
}

describe("the head anchor of a compaction", () => {
  it("keeps the whole first run when it is small", () => {
    const messages = session(10);
    expect(messages[headAnchorEnd(messages, tokensOf, 20_000)]?.content).toEqual([
      { type: "text", text: "Step 2" },
    ]);
  });

  it("keeps the task alone when the first run's tool output makes it big, and summarises the rest of the run", () => {
    const messages = session(2_000);
    const end = headAnchorEnd(messages, tokensOf, 20_000);
    expect(messages.slice(0, end).map((message) => message.role)).toEqual(["system", "user"]);
    const [segment] = planCompaction(messages, tokensOf, {
      usable: 20_000,
      tailShare: 0.1,
      minTailTurns: 1,
      force: false,
    });
    expect(segment?.start).toBe(2);
    expect(messages[segment!.start]?.role).toBe("assistant");
  });

  it("keeps nothing past the system messages when even the task is big", () => {
    const messages = session(10);
    const task = counter.countMessage(messages[1]!);
    expect(headAnchorEnd(messages, tokensOf, task * 10)).toBe(2);
    expect(headAnchorEnd(messages, tokensOf, task * 9)).toBe(1);
  });
});
