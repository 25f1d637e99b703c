import { describe, expect, it } from "vitest";
import {
  anthropicAnchors,
  fromAnthropic,
  toAnthropic,
  type AnthropicMessage,
} from "../../formats/providers/anthropic/index.ts";
import { governedAnthropicMessages, withOpeningSystem } from "./anthropic-payload.ts";

/** A client's Anthropic history: the task, two tool rounds, then a new user turn after the last result. */
const client: AnthropicMessage[] = [
  { role: "user", content: [{ type: "text", text: "Fix the failing test" }] },
  { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "read", input: { path: "a.ts" } }] },
  { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "const a = 1;" }] },
  { role: "assistant", content: [{ type: "tool_use", id: "t2", name: "read", input: { path: "b.ts" } }] },
  {
    role: "user",
    content: [
      { type: "tool_result", tool_use_id: "t2", content: "const b = 2;" },
      { type: "text", text: "Now run the tests" },
    ],
  },
];

describe("the Messages proxy's cache anchors", () => {
  it("places the governor's anchors in the converted request, moved past the opening system messages", () => {
    const history = fromAnthropic({ messages: client });
    // A governed view that rewrote the last tool result: the client's last message is converted, not sent as it
    // came (an anchor inside a tail sent as the client sent it gets no breakpoint).
    const rewritten = history.map((message, index) => (index === 4 ? { ...message } : message));
    const sources = rewritten.map((message, index) => (message === history[index] ? index : undefined));
    const { messages, anchors } = governedAnthropicMessages(client, {
      messages: rewritten,
      sources,
      cacheAnchors: [1, 4],
    });
    expect(messages).toHaveLength(5);
    // View 1 is Anthropic message 1; view 4 (the tool result) is the first block of the merged user message 4.
    expect(anchors).toEqual([
      { message: 1, blocks: 1 },
      { message: 4, blocks: 1 },
    ]);
    const opening: AnthropicMessage[] = [{ role: "system" as "user", content: "env: linux" }];
    const moved = withOpeningSystem({ messages, anchors }, opening);
    expect(moved.messages[1]).toBe(opening[0]);
    expect(moved.anchors).toEqual([
      { message: 2, blocks: 1 },
      { message: 5, blocks: 1 },
    ]);
  });

  it("leaves out an anchor whose prefix does not convert to a prefix of the request", () => {
    const history = fromAnthropic({ messages: client });
    const converted = toAnthropic(history).messages;
    expect(anthropicAnchors(history, [0, 3], converted)).toEqual([
      { message: 0, blocks: 1 },
      { message: 3, blocks: 1 },
    ]);
    // A converter that reorders blocks across the anchor: the prefix's last message is not the whole's.
    const reordered = converted.map((message, index) =>
      index === 3 ? { ...message, content: [{ type: "text" as const, text: "moved" }] } : message,
    );
    expect(anthropicAnchors(history, [3], reordered)).toEqual([]);
  });
});
