import { expect, it } from "vitest";
import { ConcurrentWriteError, NotFoundError, ValidationError } from "../../errors/errors.ts";
import type { MessageInput } from "../../model/message.ts";
import { fullTurn, reply, texts, user, type ConformanceContext } from "./conformance-fixtures.ts";

const summary = (text: string): MessageInput => ({ role: "user", content: [{ type: "text", text }] });

/** Compaction (summarised rows hidden, never deleted) and the load strategies. */
export function compactionCases(context: ConformanceContext): void {
  it("hides replaced rows and stores the summary where they stood", async () => {
    const store = context.store();
    for (let turn = 1; turn <= 3; turn++) await store.appendTurn("s1", fullTurn(turn));
    const stored = await store.applyCompaction("s1", {
      fromSeq: 0,
      toSeq: 7,
      summary: summary("summary of turns 1-2"),
      expectedNextSeq: 12,
    });
    expect(stored).toMatchObject({
      seq: 12,
      turn: 0,
      role: "user",
      kind: "summary",
      summaryOf: { fromSeq: 0, toSeq: 7, messageCount: 8 },
    });
    expect(texts(await store.loadMessages("s1"))).toEqual([
      "summary of turns 1-2",
      "instruction 3",
      "call:read",
      "result:output 3",
      "answer 3",
    ]);
    const all = await store.loadMessages("s1", { strategy: "all" });
    expect(all.map((message) => message.seq)).toEqual([12, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const dump = await store.dumpSession("s1");
    expect(dump.rows.filter((row) => row.summarizedBy === 12).map((row) => row.message.seq)).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7,
    ]);
    expect(dump.session).toMatchObject({ messageCount: 13, nextSeq: 13, turnCount: 3 });
    const next = await store.appendTurn("s1", fullTurn(4), { expectedNextSeq: 13 });
    expect(next.messages[0]).toMatchObject({ seq: 13, turn: 4 });
    expect(texts(await store.loadMessages("s1")).slice(-4)).toEqual([
      "instruction 4",
      "call:read",
      "result:output 4",
      "answer 4",
    ]);
  });

  it("replaces an earlier summary when the range starts at its first original row", async () => {
    const store = context.store();
    for (let turn = 1; turn <= 4; turn++) await store.appendTurn("s1", fullTurn(turn));
    await store.applyCompaction("s1", { fromSeq: 0, toSeq: 3, summary: summary("first") });
    const second = await store.applyCompaction("s1", {
      fromSeq: 0,
      toSeq: 7,
      summary: { ...summary("second"), summaryOf: { fromSeq: 0, toSeq: 7, messageCount: 8 } },
    });
    expect(second.summaryOf).toEqual({ fromSeq: 0, toSeq: 7, messageCount: 8 });
    expect(texts(await store.loadMessages("s1")).slice(0, 2)).toEqual(["second", "instruction 3"]);
    const middle = await store.applyCompaction("s1", { fromSeq: 9, toSeq: 10, summary: summary("steps") });
    expect(middle).toMatchObject({ seq: 18, turn: 3, summaryOf: { fromSeq: 9, toSeq: 10, messageCount: 2 } });
    expect(texts(await store.loadMessages("s1"))).toEqual([
      "second",
      "instruction 3",
      "steps",
      "answer 3",
      "instruction 4",
      "call:read",
      "result:output 4",
      "answer 4",
    ]);
    const all = await store.loadMessages("s1", { strategy: "all" });
    expect(all.map((message) => message.seq)).toEqual([
      17, 16, 0, 1, 2, 3, 4, 5, 6, 7, 8, 18, 9, 10, 11, 12, 13, 14, 15,
    ]);
  });

  it("refuses bad compactions and changes nothing", async () => {
    const store = context.store();
    for (let turn = 1; turn <= 2; turn++) await store.appendTurn("s1", fullTurn(turn));
    await store.applyCompaction("s1", { fromSeq: 1, toSeq: 2, summary: summary("steps") });
    const before = await store.dumpSession("s1");
    await expect(
      store.applyCompaction("s1", { fromSeq: 5, toSeq: 3, summary: summary("x") }),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(
      store.applyCompaction("s1", { fromSeq: 0, toSeq: 99, summary: summary("x") }),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      store.applyCompaction("s1", { fromSeq: 2, toSeq: 2, summary: summary("x") }),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(
      store.applyCompaction("s1", { fromSeq: 0, toSeq: 3, summary: { ...reply("x") } }),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(
      store.applyCompaction("s1", { fromSeq: 0, toSeq: 3, summary: summary("x"), expectedNextSeq: 8 }),
    ).rejects.toBeInstanceOf(ConcurrentWriteError);
    await expect(
      store.applyCompaction("nope", { fromSeq: 0, toSeq: 0, summary: summary("x") }),
    ).rejects.toBeInstanceOf(NotFoundError);
    expect(await store.dumpSession("s1")).toEqual(before);
  });

  it("loads the recent turns reduced to user text and final reply", async () => {
    const store = context.store();
    for (let turn = 1; turn <= 5; turn++) await store.appendTurn("s1", fullTurn(turn));
    const recent = await store.loadMessages("s1", { strategy: "recent", recentTurns: 2 });
    expect(texts(recent)).toEqual(["instruction 4", "answer 4", "instruction 5", "answer 5"]);
    expect(recent.map((message) => message.seq)).toEqual([12, 15, 16, 19]);
    const byDefault = await store.loadMessages("s1", { strategy: "recent" });
    expect(texts(byDefault)).toEqual([
      "instruction 3",
      "answer 3",
      "instruction 4",
      "answer 4",
      "instruction 5",
      "answer 5",
    ]);
    expect(await store.loadMessages("s1", { strategy: "recent", maxTurns: 60 })).toHaveLength(10);
    const mixed = await store.appendTurn("s1", [
      user("six"),
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "hmm" },
          { type: "text", text: "final six" },
        ],
      },
    ]);
    const last = (await store.loadMessages("s1", { strategy: "recent", recentTurns: 1 })).at(-1)!;
    expect(last).toMatchObject({
      seq: mixed.messages[1]!.seq,
      content: [{ type: "text", text: "final six" }],
    });
  });
}
