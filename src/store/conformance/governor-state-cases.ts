import { expect, it } from "vitest";
import { ConcurrentWriteError, NotFoundError, ValidationError } from "../../errors/errors.ts";
import type { JsonValue, MessageInput } from "../../model/message.ts";
import { fullTurn, texts, type ConformanceContext } from "./conformance-fixtures.ts";

const summary = (text: string): MessageInput => ({ role: "user", content: [{ type: "text", text }] });

/** A state with the shapes a governor snapshot has: nested objects, arrays, key order that must come back. */
const state = (requests: number): JsonValue => ({
  version: 1,
  view: [{ id: "m-1" }, { message: { role: "user", content: [{ type: "text", text: 'é \u2028 "q"' }] } }],
  requests,
  piled: { toolTokens: 12, inputTokens: 0, nextCheckAt: 1.5 },
});

/** Governance artefacts written with the turn: compactions and the governor's state, in one transaction. */
export function governorStateCases(context: ConformanceContext): void {
  it("stores the governor state with the turn, and returns it until a write without one", async () => {
    const store = context.store();
    await store.appendTurn("s1", fullTurn(1), { governorState: state(1) });
    expect(await store.loadGovernorState("s1")).toEqual(state(1));
    expect(JSON.stringify(await store.loadGovernorState("s1"))).toBe(JSON.stringify(state(1)));
    await store.appendTurn("s1", fullTurn(2), { governorState: state(2) });
    expect(await store.loadGovernorState("s1")).toEqual(state(2));
    // Another writer's turn (no state): the stored state no longer describes the session.
    await store.appendTurn("s1", fullTurn(3));
    expect(await store.loadGovernorState("s1")).toBeUndefined();
    await store.appendTurn("s1", fullTurn(4), { governorState: state(4) });
    await store.applyCompaction("s1", { fromSeq: 0, toSeq: 3, summary: summary("turn 1") });
    expect(await store.loadGovernorState("s1")).toBeUndefined();
    expect(await store.loadGovernorState("unknown")).toBeUndefined();
  });

  it("applies the turn's compactions after its messages in the same write, and saves a state alone", async () => {
    const store = context.store();
    await store.appendTurn("s1", fullTurn(1));
    const result = await store.appendTurn("s1", fullTurn(2), {
      expectedNextSeq: 4,
      compactions: [{ fromSeq: 0, toSeq: 3, summary: summary("turn 1"), expectedNextSeq: 999 }],
      governorState: state(2),
    });
    expect(result.messages.map((message) => message.seq)).toEqual([4, 5, 6, 7]);
    expect(result.summaries).toHaveLength(1);
    expect(result.summaries[0]).toMatchObject({
      seq: 8,
      kind: "summary",
      summaryOf: { fromSeq: 0, toSeq: 3 },
    });
    expect(result.session.nextSeq).toBe(9);
    expect(texts(await store.loadMessages("s1"))).toEqual([
      "turn 1",
      "instruction 2",
      "call:read",
      "result:output 2",
      "answer 2",
    ]);
    expect(await store.loadGovernorState("s1")).toEqual(state(2));
    // A compaction or a state alone, with no messages (a user's /compact between turns).
    const alone = await store.appendTurn("s1", [], {
      expectedNextSeq: 9,
      compactions: [{ fromSeq: 4, toSeq: 7, summary: summary("turn 2") }],
      governorState: state(3),
    });
    expect(alone.messages).toEqual([]);
    expect(alone.session).toMatchObject({ nextSeq: 10, turnCount: 2 });
    expect(texts(await store.loadMessages("s1"))).toEqual(["turn 1", "turn 2"]);
    expect(await store.loadGovernorState("s1")).toEqual(state(3));
  });

  it("writes nothing of the turn when one of its compactions is refused, or the caller is stale", async () => {
    const store = context.store();
    await store.appendTurn("s1", fullTurn(1), { governorState: state(1) });
    const before = await store.dumpSession("s1");
    await expect(
      store.appendTurn("s1", fullTurn(2), {
        compactions: [{ fromSeq: 0, toSeq: 40, summary: summary("past the end") }],
        governorState: state(2),
      }),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      store.appendTurn("s1", fullTurn(2), { expectedNextSeq: 3, governorState: state(2) }),
    ).rejects.toBeInstanceOf(ConcurrentWriteError);
    await expect(store.appendTurn("s1", [])).rejects.toBeInstanceOf(ValidationError);
    await expect(store.appendTurn("s2", [], { governorState: state(1) })).rejects.toBeInstanceOf(
      ValidationError,
    );
    expect(await store.dumpSession("s1")).toEqual(before);
    expect(await store.loadGovernorState("s1")).toEqual(state(1));
    expect(await store.getSession("s2")).toBeUndefined();
  });

  it("keeps the state across a reopen, and drops it with the session", async () => {
    let store = context.store();
    await store.appendTurn("s1", fullTurn(1), { governorState: state(1) });
    if (context.backend.reopen) {
      store = await context.backend.reopen(store, context.options());
      context.replaceStore(store);
      expect(await store.loadGovernorState("s1")).toEqual(state(1));
    }
    await store.deleteSession("s1");
    expect(await store.loadGovernorState("s1")).toBeUndefined();
    await store.appendTurn("s1", fullTurn(1));
    expect(await store.loadGovernorState("s1")).toBeUndefined();
  });
}
