import { describe, expect, it } from "vitest";
import type { ContentBlock } from "../../model/message.ts";
import { MessageListBuilder, type UnansweredCallCause } from "./message-list-builder.ts";

const call = (id: string): ContentBlock => ({ type: "tool-call", id, name: "bash", input: {} });
const result = (callId: string): ContentBlock => ({
  type: "tool-result",
  callId,
  toolName: "bash",
  content: "ok",
});

/** Builds a step with calls `a` and `b`, answers `a`, then adds `next` (or nothing) and returns the messages. */
function stepThen(next: Parameters<MessageListBuilder["add"]>[0] | undefined) {
  const builder = new MessageListBuilder("s");
  builder.add({ role: "user", content: [{ type: "text", text: "go" }] });
  builder.add({ role: "assistant", content: [call("a"), call("b")] });
  builder.add({ role: "tool", content: [result("a")] });
  if (next) builder.add(next);
  return builder.build();
}

describe("MessageListBuilder", () => {
  const cases: [string, Parameters<MessageListBuilder["add"]>[0] | undefined, UnansweredCallCause][] = [
    ["a user message", { role: "user", content: [{ type: "text", text: "stop" }] }, "user-message"],
    ["the next response", { role: "assistant", content: [{ type: "text", text: "hm" }] }, "next-response"],
    [
      "a compaction marker",
      { role: "system", kind: "marker", content: [{ type: "text", text: "compacted" }] },
      "compaction",
    ],
    ["the end of the transcript", undefined, "end-of-transcript"],
  ];
  for (const [what, next, cause] of cases) {
    it(`answers a call still open at ${what}, right after its step, saying what happened`, () => {
      const messages = stepThen(next);
      expect(messages[3]).toMatchObject({
        role: "tool",
        seq: 3,
        content: [{ type: "tool-result", callId: "b", toolName: "bash", isError: true }],
        metadata: { synthetic: true, unanswered: cause },
      });
      expect(messages.filter((message) => message.metadata?.["synthetic"] === true)).toHaveLength(1);
      expect(messages.map((message) => message.seq)).toEqual(messages.map((_, index) => index));
      if (next) expect(messages[4]!.role).toBe(next.role);
    });
  }

  it("adds nothing when every call is answered, and a system message leaves a call open", () => {
    const builder = new MessageListBuilder("s");
    builder.add({ role: "assistant", content: [call("a")] });
    builder.add({ role: "system", content: [{ type: "text", text: "reminder" }] });
    builder.add({ role: "tool", content: [result("a")] });
    expect(builder.build().map((message) => message.role)).toEqual(["assistant", "system", "tool"]);
  });
});
