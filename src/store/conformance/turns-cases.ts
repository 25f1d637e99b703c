import { expect, it } from "vitest";
import { ConcurrentWriteError, NotFoundError, ValidationError } from "../../errors/errors.ts";
import type { MessageInput } from "../../model/message.ts";
import { fullTurn, reply, texts, toolStep, user, type ConformanceContext } from "./conformance-fixtures.ts";

/** Appending turns: lazy creation, numbering, atomicity, concurrency, durability, usage. */
export function turnCases(context: ConformanceContext): void {
  it("creates a session with its first user message, not before", async () => {
    const store = context.store();
    expect(await store.getSession("s1")).toBeUndefined();
    await expect(store.appendTurn("s1", [reply("no prompt yet")])).rejects.toBeInstanceOf(ValidationError);
    expect(await store.getSession("s1")).toBeUndefined();
    expect((await store.listSessions()).sessions).toEqual([]);
    await expect(store.loadMessages("s1")).rejects.toBeInstanceOf(NotFoundError);

    const { session, messages } = await store.appendTurn(
      "s1",
      [user("  List   the files "), reply("a.ts b.ts")],
      {
        expectedNextSeq: 0,
        session: { owner: "ada", agent: "coder", metadata: { project: "p1", priority: 2 } },
      },
    );
    expect(session).toMatchObject({
      id: "s1",
      owner: "ada",
      agent: "coder",
      title: "List the files",
      createdAt: context.now(),
      updatedAt: context.now(),
      messageCount: 2,
      turnCount: 1,
      nextSeq: 2,
      metadata: { project: "p1", priority: 2 },
    });
    expect(messages.map((message) => [message.seq, message.turn, message.sessionId])).toEqual([
      [0, 1, "s1"],
      [1, 1, "s1"],
    ]);
    expect(await store.getSession("s1")).toEqual(session);
  });

  it("cuts the title to 100 characters and keeps a given title", async () => {
    const store = context.store();
    const { session } = await store.appendTurn("long", [user("word ".repeat(60))]);
    expect([...session.title!].length).toBeLessThanOrEqual(100);
    expect(session.title!.endsWith("…")).toBe(true);
    const named = await store.appendTurn("named", [user("hello")], { session: { title: "My title" } });
    expect(named.session.title).toBe("My title");
  });

  it("numbers seqs and turns across turns and loads the history in order", async () => {
    const store = context.store();
    await store.appendTurn("s1", fullTurn(1));
    context.advance(1000);
    const second = await store.appendTurn("s1", fullTurn(2), { expectedNextSeq: 4 });
    expect(second.messages.map((message) => message.seq)).toEqual([4, 5, 6, 7]);
    expect(second.messages.every((message) => message.turn === 2)).toBe(true);
    expect(second.session).toMatchObject({
      messageCount: 8,
      turnCount: 2,
      nextSeq: 8,
      updatedAt: context.now(),
    });
    const loaded = await store.loadMessages("s1");
    expect(loaded).toEqual([...(await store.loadMessages("s1", { strategy: "all" }))]);
    expect(texts(loaded)).toEqual([
      "instruction 1",
      "call:read",
      "result:output 1",
      "answer 1",
      "instruction 2",
      "call:read",
      "result:output 2",
      "answer 2",
    ]);
    expect(loaded.slice(4)).toEqual(second.messages);
  });

  it("refuses a stale expectedNextSeq with ConcurrentWriteError and writes nothing", async () => {
    const store = context.store();
    await store.appendTurn("s1", fullTurn(1));
    const error = await store
      .appendTurn("s1", fullTurn(2), { expectedNextSeq: 2 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConcurrentWriteError);
    expect((error as ConcurrentWriteError).code).toBe("concurrent_write");
    expect((await store.getSession("s1"))?.nextSeq).toBe(4);
    await expect(store.appendTurn("fresh", [user("hi")], { expectedNextSeq: 3 })).rejects.toBeInstanceOf(
      ConcurrentWriteError,
    );
    expect(await store.getSession("fresh")).toBeUndefined();
  });

  it("refuses an append to a session of another owner than expectedOwner, and writes nothing", async () => {
    const store = context.store();
    await store.appendTurn("s1", fullTurn(1), { session: { owner: "ada" } });
    await store.appendTurn("cli", fullTurn(1));
    // The id of a session that was deleted and made again by another owner: same seq, another session.
    for (const [id, expectedOwner] of [
      ["s1", "bob"],
      ["s1", null],
      ["cli", "ada"],
    ] as const) {
      const error = await store
        .appendTurn(id, fullTurn(2), { expectedNextSeq: 4, expectedOwner })
        .catch((caught: unknown) => caught);
      expect(error, `${id} as ${expectedOwner}`).toBeInstanceOf(ConcurrentWriteError);
      expect((await store.getSession(id))?.nextSeq).toBe(4);
    }
    await store.appendTurn("s1", fullTurn(2), { expectedNextSeq: 4, expectedOwner: "ada" });
    await store.appendTurn("cli", fullTurn(2), { expectedNextSeq: 4, expectedOwner: null });
    // A session the append creates has no owner to compare: it is made with `session.owner`.
    const made = await store.appendTurn("new", fullTurn(1), {
      expectedOwner: "bob",
      session: { owner: "bob" },
    });
    expect(made.session.owner).toBe("bob");
    expect((await store.getSession("s1"))?.nextSeq).toBe(8);
    expect((await store.getSession("cli"))?.nextSeq).toBe(8);
  });

  it("keeps U+0000 (NUL) in texts and tool outputs, and refuses it in ids and names", async () => {
    const store = context.store();
    const turn: MessageInput[] = [
      user("paste:\u0000end"),
      ...toolStep("read", "binary\u0000output"),
      reply("done\u0000"),
    ];
    const { session, messages } = await store.appendTurn("s1", turn);
    expect(session.title).toBe("paste: end");
    expect(await store.loadMessages("s1")).toEqual(messages);
    for (const [id, options, input] of [
      ["s\u0000", {}, turn],
      ["s2", { session: { owner: "a\u0000" } }, turn],
      ["s2", { session: { agent: "\u0000" } }, turn],
      ["s2", {}, [{ ...user("hi"), id: "m\u0000" }]],
    ] as const) {
      await expect(store.appendTurn(id, input, options)).rejects.toBeInstanceOf(ValidationError);
    }
    expect((await store.listSessions()).sessions.map((stored) => stored.id)).toEqual(["s1"]);
  });

  it("leaves no trace of a failed turn", async () => {
    const store = context.store();
    const first = await store.appendTurn("s1", fullTurn(1));
    const before = await store.dumpSession("s1");
    const broken = [
      user("next"),
      ...toolStep("grep", "found"),
      { role: "tool", content: [{ type: "tool-call" }] },
    ];
    await expect(store.appendTurn("s1", broken as MessageInput[])).rejects.toBeInstanceOf(ValidationError);
    const duplicate: MessageInput = { ...reply("again"), id: first.messages[0]!.id };
    await expect(store.appendTurn("s1", [user("next"), duplicate])).rejects.toBeInstanceOf(ValidationError);
    const image = { type: "image" as const, mediaType: "image/png", data: "A".repeat(4000) };
    await expect(
      store.appendTurn("s1", [
        { role: "user", content: [image] },
        { ...reply("x"), id: first.messages[1]!.id },
      ]),
    ).rejects.toBeInstanceOf(ValidationError);
    expect(await store.dumpSession("s1")).toEqual(before);
    expect(await store.blobs.list("s1")).toEqual([]);
  });

  const { openSecond, reopen } = context.backend;
  if (openSecond)
    it("lets only one of two writers with the same expected seq append", async () => {
      const store = context.store();
      const second = context.track(await openSecond(store, context.options()));
      await store.appendTurn("s1", fullTurn(1));
      const results = await Promise.allSettled([
        store.appendTurn("s1", fullTurn(2), { expectedNextSeq: 4 }),
        second.appendTurn("s1", fullTurn(3), { expectedNextSeq: 4 }),
      ]);
      const rejected = results.filter((result) => result.status === "rejected");
      expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
      expect(rejected).toHaveLength(1);
      expect((rejected[0] as PromiseRejectedResult).reason).toBeInstanceOf(ConcurrentWriteError);
      const loaded = await second.loadMessages("s1");
      expect(loaded.map((message) => message.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(new Set(loaded.slice(4).map((message) => message.turn))).toEqual(new Set([2]));
    });

  if (openSecond)
    it("lets only one of two writers create a session both expect to be new", async () => {
      const store = context.store();
      const second = context.track(await openSecond(store, context.options()));
      const results = await Promise.allSettled([
        store.appendTurn("s1", fullTurn(1), { expectedNextSeq: 0, session: { owner: "ada" } }),
        second.appendTurn("s1", fullTurn(2), { expectedNextSeq: 0, session: { owner: "bob" } }),
      ]);
      const fulfilled = results.filter((result) => result.status === "fulfilled");
      const rejected = results.filter((result) => result.status === "rejected");
      expect(fulfilled).toHaveLength(1);
      expect(rejected).toHaveLength(1);
      expect((rejected[0] as PromiseRejectedResult).reason).toBeInstanceOf(ConcurrentWriteError);
      const { value } = fulfilled[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof store.appendTurn>>>;
      expect(await second.loadMessages("s1")).toEqual(value.messages);
      expect(await store.getSession("s1")).toEqual(value.session);
      // Whichever created it, neither writer creates it again.
      for (const writer of [store, second]) {
        await expect(writer.appendTurn("s1", fullTurn(3), { expectedNextSeq: 0 })).rejects.toBeInstanceOf(
          ConcurrentWriteError,
        );
      }
      expect(await store.getSession("s1")).toEqual(value.session);
    });

  if (reopen)
    it("keeps every acknowledged turn across a reopen", async () => {
      const store = context.store();
      await store.appendTurn("s1", fullTurn(1));
      const { session } = await store.appendTurn("s1", fullTurn(2));
      const before = await store.loadMessages("s1");
      const reopened = await reopen(store, context.options());
      context.replaceStore(reopened);
      expect(await reopened.getSession("s1")).toEqual(session);
      expect(await reopened.loadMessages("s1")).toEqual(before);
    });

  it("adds provider-reported usage and its cost per turn", async () => {
    const store = context.store();
    const usage = { input: 1000, output: 100, cacheRead: 400, cacheWrite: 100, reasoning: 20 };
    await store.appendTurn("s1", [user("go"), reply("done", usage)]);
    const { session } = await store.appendTurn(
      "s1",
      [user("again"), reply("ok", { input: 500, output: 50 })],
      {
        usage: [
          { model: "test-model", usage: { input: 100, output: 10 } },
          { usage: { input: 7, output: 7 } },
        ],
      },
    );
    expect(session.usage).toEqual({
      input: 1607,
      output: 167,
      cacheRead: 400,
      cacheWrite: 100,
      reasoning: 20,
    });
    // 500 uncached × 2 + 400 × 0.5 + 100 × 2.5 + 100 × 10; then 500 × 2 + 50 × 10; then 100 × 2 + 10 × 10; unpriced 0
    const expected = (1000 + 200 + 250 + 1000 + 1000 + 500 + 200 + 100) / 1_000_000;
    expect(session.cost).toBeCloseTo(expected, 12);
    expect((await store.getSession("s1"))?.cost).toBeCloseTo(expected, 12);
  });
}
