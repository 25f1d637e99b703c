import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toOpenAIResponses } from "../../formats/providers/openai-responses/index.ts";
import { replyContent, responsesMessages } from "./responses-items.ts";
import { newMessages } from "./responses-session-inputs.ts";

/** Arbitrary Responses conversations: user turns, and assistant turns with reasoning, text and function calls. */
const conversation = fc
  .array(
    fc.record({
      user: fc.string({ minLength: 1, maxLength: 20 }),
      reasoning: fc.option(fc.string({ minLength: 1, maxLength: 12 }), { nil: undefined }),
      text: fc.option(fc.string({ minLength: 1, maxLength: 20 }), { nil: undefined }),
      calls: fc.array(
        fc.record({ name: fc.constantFrom("ls", "cat"), output: fc.string({ maxLength: 20 }) }),
        {
          maxLength: 2,
        },
      ),
    }),
    { minLength: 1, maxLength: 6 },
  )
  .map((turns) =>
    turns.flatMap((turn, index) => {
      const items: Record<string, unknown>[] = [{ type: "message", role: "user", content: turn.user }];
      if (turn.reasoning !== undefined) {
        items.push({
          type: "reasoning",
          id: `rs_${index}`,
          summary: [],
          encrypted_content: `enc-${turn.reasoning}`,
        });
      }
      if (turn.text !== undefined) items.push({ type: "message", role: "assistant", content: turn.text });
      turn.calls.forEach((call, position) =>
        items.push({
          type: "function_call",
          call_id: `c${index}_${position}`,
          name: call.name,
          arguments: "{}",
        }),
      );
      turn.calls.forEach((call, position) =>
        items.push({ type: "function_call_output", call_id: `c${index}_${position}`, output: call.output }),
      );
      return items;
    }),
  );

describe("Responses items ↔ ctxkit messages for the proxy", () => {
  // Input after previous_response_id is not passed through newMessages (responses-proxy.test.ts checks it is
  // stored whole): its new items may equal stored ones, which no reading of the content could tell from a resend.
  it("newMessages skips everything up to the last reply the session holds, for any split of a conversation", () => {
    fc.assert(
      fc.property(conversation, fc.nat(), (items, cut) => {
        const all = responsesMessages(items);
        const replies = all.flatMap((message, index) => (message.role === "assistant" ? [index] : []));
        const storedUpTo = replies.length === 0 ? -1 : replies[cut % replies.length]!;
        const stored = all.slice(0, storedUpTo + 1);
        expect(newMessages(all, stored)).toEqual(all.slice(storedUpTo + 1));
      }),
    );
  });

  it("newMessages matches a resend to the stored replies in order: a new reply equal to a stored one is new", () => {
    const all = responsesMessages([
      { type: "message", role: "user", content: "again?" },
      { type: "message", role: "assistant", content: "yes" },
      { type: "message", role: "user", content: "again?" },
      { type: "message", role: "assistant", content: "yes" },
      { type: "message", role: "user", content: "and now?" },
    ]);
    expect(newMessages(all, all.slice(0, 2))).toEqual(all.slice(2));
    expect(newMessages(all, all.slice(0, 4))).toEqual(all.slice(4));
  });

  it("replyContent keeps reasoning with its encrypted content, text, calls and built-in tool items, in order", () => {
    const content = replyContent([
      {
        type: "reasoning",
        id: "rs_1",
        summary: [{ type: "summary_text", text: "think" }],
        encrypted_content: "E",
      },
      { type: "web_search_call", id: "ws_1", status: "completed" },
      {
        type: "message",
        id: "m1",
        role: "assistant",
        content: [{ type: "output_text", text: "Hi", annotations: [] }],
      },
      { type: "function_call", id: "fc_1", call_id: "c1", name: "ls", arguments: '{"a":1}' },
    ]);
    expect(content.map((block) => block.type)).toEqual(["reasoning", "opaque", "text", "tool-call"]);
    const items = toOpenAIResponses([{ id: "x", role: "assistant", content, createdAt: "" } as never]);
    expect(items[0]).toMatchObject({ type: "reasoning", encrypted_content: "E" });
    expect(items[1]).toEqual({ type: "web_search_call", id: "ws_1", status: "completed" });
    expect(replyContent([])).toEqual([{ type: "text", text: "" }]);
  });
});
