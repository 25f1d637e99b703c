import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Message } from "../model/message.ts";
import { AppendOnlyOrphanRepair, repairOrphans } from "./orphan-repair.ts";

/** A message list of user texts, assistant steps calling 0–2 tools (ids a–d) and tool messages answering any id. */
const histories = fc
  .array(
    fc.oneof(
      fc.constant({ role: "user" as const }),
      fc.record({
        role: fc.constant("assistant" as const),
        calls: fc.subarray(["a", "b", "c", "d"], { maxLength: 2 }),
      }),
      fc.record({
        role: fc.constant("tool" as const),
        answers: fc.subarray(["a", "b", "c", "d"], { minLength: 1, maxLength: 2 }),
      }),
    ),
    { maxLength: 12 },
  )
  .map((steps) =>
    steps.map((step, seq): Message => {
      const base = { id: `m${seq}`, sessionId: "s", seq, turn: seq, createdAt: "2026-01-01T00:00:00.000Z" };
      if (step.role === "user") return { ...base, role: "user", content: [{ type: "text", text: "hi" }] };
      if (step.role === "assistant")
        return {
          ...base,
          role: "assistant",
          content: [
            { type: "text", text: "ok" },
            ...step.calls.map((id) => ({
              type: "tool-call" as const,
              id: `${id}${seq}`,
              name: "read",
              input: {},
            })),
          ],
        };
      // A result answers the call of that id made by the nearest assistant step before it (if any made it).
      const owner = steps.slice(0, seq).findLastIndex((before) => before.role === "assistant");
      return {
        ...base,
        role: "tool",
        content: step.answers.map((id) => ({
          type: "tool-result" as const,
          callId: `${id}${owner}`,
          toolName: "read",
          content: "done",
        })),
      };
    }),
  );

/** True when each tool block right after an assistant step answers exactly its calls, and no tool message is elsewhere. */
function wellPaired(messages: readonly Message[]): boolean {
  let open: Set<string> | undefined;
  for (const message of messages) {
    if (message.role === "tool") {
      if (open === undefined) return false;
      for (const block of message.content)
        if (block.type === "tool-result" && !open.delete(block.callId)) return false;
      continue;
    }
    if (open !== undefined && open.size > 0) return false;
    open =
      message.role === "assistant"
        ? new Set(message.content.flatMap((block) => (block.type === "tool-call" ? [block.id] : [])))
        : undefined;
  }
  return open === undefined || open.size === 0;
}

describe("AppendOnlyOrphanRepair", () => {
  it("repairs a list growing at its end exactly as repairOrphans does the whole list, each time", () => {
    fc.assert(
      fc.property(histories, fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: 6 }), (history, cuts) => {
        const repair = new AppendOnlyOrphanRepair();
        const list: Message[] = [];
        // The same array grows; now and then a different one (a checkpoint's) is given, or the list is cut short.
        for (const [step, message] of history.entries()) {
          list.push(message);
          const given = cuts.includes(step) ? [...list] : list;
          const expected = repairOrphans(given);
          const got = repair.repair(given);
          expect(got.messages).toEqual(expected.messages);
          expect(got.report).toEqual(expected.report);
          if (expected.messages === given) expect(got.messages).toBe(given);
          expect(got.messages.slice(0, got.kept)).toEqual(given.slice(0, got.kept));
          for (let index = 0; index < got.kept; index++) expect(got.messages[index]).toBe(given[index]);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe("repairOrphans", () => {
  it("pairs every call with a result right after it, keeps a well-paired list as it is, and is idempotent", () => {
    fc.assert(
      fc.property(histories, (history) => {
        const { messages } = repairOrphans(history);
        expect(wellPaired(messages)).toBe(true);
        if (wellPaired(history)) expect(messages).toBe(history);
        expect(repairOrphans(messages).messages).toBe(messages);
      }),
      { numRuns: 500 },
    );
  });

  it("drops the results that follow a step that called no tool", () => {
    const [user, step, result] = [
      {
        id: "u",
        sessionId: "s",
        seq: 0,
        turn: 0,
        createdAt: "t",
        role: "user",
        content: [{ type: "text", text: "hi" }],
      },
      {
        id: "a",
        sessionId: "s",
        seq: 1,
        turn: 0,
        createdAt: "t",
        role: "assistant",
        content: [{ type: "text", text: "ok" }],
      },
      {
        id: "r",
        sessionId: "s",
        seq: 2,
        turn: 0,
        createdAt: "t",
        role: "tool",
        content: [{ type: "tool-result", callId: "x", toolName: "read", content: "?" }],
      },
    ] as Message[];
    const repaired = repairOrphans([user!, step!, result!]);
    expect(repaired.messages).toEqual([user, step]);
    expect(repaired.report.dropped).toEqual(["x"]);
  });
});
