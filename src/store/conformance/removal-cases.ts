import { expect, it } from "vitest";
import { CompactedMessageError, ConcurrentWriteError } from "../../errors/errors.ts";
import { fullTurn, reply, texts, user, type ConformanceContext } from "./conformance-fixtures.ts";

/** `removeLastMessage`: the newest row goes, with what indexes and counts it, or nothing changes. */
export function removalCases(context: ConformanceContext): void {
  it("removes the newest message and moves the session's counters, keeping its usage", async () => {
    const store = context.store();
    await store.appendTurn("s1", fullTurn(1));
    await store.appendTurn("s1", [user("instruction 2"), reply("answer 2", { input: 100, output: 20 })]);
    const before = (await store.getSession("s1"))!;
    context.advance(1_000);
    const removed = await store.removeLastMessage("s1");
    expect(removed).toMatchObject({ seq: 5, role: "assistant", turn: 2 });
    expect(texts([removed!])).toEqual(["answer 2"]);
    const after = (await store.getSession("s1"))!;
    expect(after).toMatchObject({
      messageCount: before.messageCount - 1,
      turnCount: 2,
      // The removal takes a seq of its own: no later message reuses the removed one's, and stale writers notice.
      nextSeq: before.nextSeq + 1,
      updatedAt: context.now(),
      // The reply's request was billed: usage and cost stay.
      usage: before.usage,
      cost: before.cost,
      title: before.title,
    });
    // The user message that opened turn 2 goes next, and the turn with it.
    expect(texts([(await store.removeLastMessage("s1"))!])).toEqual(["instruction 2"]);
    expect((await store.getSession("s1"))!.turnCount).toBe(1);
    expect(texts(await store.loadMessages("s1"))).toEqual([
      "instruction 1",
      "call:read",
      "result:output 1",
      "answer 1",
    ]);
    const appended = await store.appendTurn("s1", [user("instruction 3")], { expectedNextSeq: 8 });
    expect(appended.messages[0]).toMatchObject({ seq: 8, turn: 2 });
    expect(await store.removeLastMessage("unknown")).toBeUndefined();
  });

  it("refuses a writer that loaded the session before the removal", async () => {
    const store = context.store();
    const { session } = await store.appendTurn("s1", fullTurn(1));
    await store.removeLastMessage("s1");
    await expect(
      store.appendTurn("s1", [reply("late")], { expectedNextSeq: session.nextSeq }),
    ).rejects.toBeInstanceOf(ConcurrentWriteError);
    expect(texts(await store.loadMessages("s1"))).toEqual(["instruction 1", "call:read", "result:output 1"]);
  });

  it("drops the stored governor state, which may name the removed message", async () => {
    const store = context.store();
    await store.appendTurn("s1", fullTurn(1), { governorState: { view: ["m-3"] } });
    expect(await store.loadGovernorState("s1")).toEqual({ view: ["m-3"] });
    await store.removeLastMessage("s1");
    expect(await store.loadGovernorState("s1")).toBeUndefined();
  });

  it("refuses to remove a summary or what a compaction covers, and changes nothing", async () => {
    const store = context.store();
    await store.appendTurn("s1", fullTurn(1));
    await store.applyCompaction("s1", { fromSeq: 0, toSeq: 3, summary: user("turn 1 in short") });
    const dump = await store.dumpSession("s1");
    const error = await store.removeLastMessage("s1").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CompactedMessageError);
    expect(error).toMatchObject({ code: "unsupported", sessionId: "s1", seq: 4 });
    expect(await store.dumpSession("s1")).toEqual(dump);
    // Messages after the summary can go; the summary then stops the next removal.
    await store.appendTurn("s1", [user("instruction 2")], { governorState: { kept: true } });
    expect(texts([(await store.removeLastMessage("s1"))!])).toEqual(["instruction 2"]);
    await expect(store.removeLastMessage("s1")).rejects.toBeInstanceOf(CompactedMessageError);
    expect(texts(await store.loadMessages("s1"))).toEqual(["turn 1 in short"]);
  });

  it("takes the removed message's words out of search, whether indexed yet or not", async () => {
    let store = context.store();
    await store.appendTurn("a", [user("plain question"), reply("the zeppelin hangar")]);
    await store.appendTurn("b", [user("other question"), reply("a zeppelin too")]);
    const { reopen } = context.backend;
    if (reopen) {
      // A reopened SQL store has indexed every word (closing drains the queue).
      store = await reopen(store, context.options());
      context.replaceStore(store);
    }
    await store.removeLastMessage("b");
    expect((await store.searchSessions("zeppelin")).map((hit) => hit.session.id)).toEqual(["a"]);
    // A message appended afterwards (SQLite may give it the removed row's id) is found by its own words only.
    await store.appendTurn("b", [reply("a blimp instead")]);
    expect((await store.searchSessions("blimp")).map((hit) => hit.session.id)).toEqual(["b"]);
    expect((await store.searchSessions("zeppelin")).map((hit) => hit.session.id)).toEqual(["a"]);
    await store.removeLastMessage("a");
    expect(await store.searchSessions("zeppelin")).toEqual([]);
  });
}
