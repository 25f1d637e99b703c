import { describe, expect, it } from "vitest";
import type { Message } from "../../model/message.ts";
import { FakeTokenCounter } from "../../test/fake-token-counter.ts";
import { HistoryBuilder } from "../../test/history-builder.ts";
import type { GovernanceEvent } from "../events.ts";
import type { ProcessorContext } from "../processor.ts";
import { createStripOlderReasoning } from "./strip-older-reasoning.ts";

const counter = new FakeTokenCounter();

function run(messages: readonly Message[]) {
  const events: GovernanceEvent[] = [];
  const context = {
    tokensOf: (message: Message) => counter.countMessage(message),
    emit: (event: GovernanceEvent) => events.push(event),
  } as unknown as ProcessorContext;
  return { output: createStripOlderReasoning().process(messages, context), events };
}

describe("strip-older-reasoning", () => {
  it("strips older turns' thoughts, and leaves reasoning that weighs nothing (a bare signature) as it is", () => {
    const history = new HistoryBuilder()
      .user("Fix the parser")
      .message({
        role: "assistant",
        content: [
          { type: "reasoning", text: "", signature: "sig-1", signedBy: "anthropic" },
          { type: "text", text: "Looking at it." },
        ],
      })
      .message({
        role: "assistant",
        content: [
          { type: "reasoning", text: "The tokenizer drops trailing commas. ".repeat(20) },
          { type: "text", text: "Found it." },
        ],
      })
      .user("Now the tests")
      .build();
    const { output, events } = run(history);
    const list = output as readonly Message[];
    // The weightless thought stays: removing it would rewrite the cached prefix from there and save nothing.
    expect(list[1]).toBe(history[1]);
    expect(list[2]!.content.map((block) => block.type)).toEqual(["text"]);
    expect(events.map((event) => event.type)).toEqual(["reasoning-stripped"]);
    expect(events[0]!.messageIds).toEqual([history[2]!.id]);
  });

  it("drops an older message that held only a bare signature (the message itself goes)", () => {
    const history = new HistoryBuilder()
      .user("Go")
      .message({ role: "assistant", content: [{ type: "reasoning", text: "", signature: "sig" }] })
      .reply("Done.")
      .user("Next")
      .build();
    const list = run(history).output as readonly Message[];
    expect(list.map((message) => message.id)).toEqual([history[0]!.id, history[2]!.id, history[3]!.id]);
  });
});
