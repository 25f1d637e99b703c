import { describe, expect, it } from "vitest";
import { messageText } from "../model/blocks.ts";
import { MemorySessionStore } from "../store/memory/index.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { createContextEngine } from "./context-engine.ts";
import type { PreparedRequest } from "./prepared-request.ts";

function overflowError(): Error {
  return Object.assign(new Error("This model's maximum context length is 128000 tokens."), {
    status: 400,
    code: "context_length_exceeded",
  });
}

async function engineOver(store: MemorySessionStore) {
  return createContextEngine({
    store,
    contextWindow: 100_000,
    tokenCounter: new FakeTokenCounter(),
    summarizer: new FakeSummarizer(),
  });
}

describe("SessionTurn", () => {
  it("commits what it added with the reply in one write, and the committed state lives in the conversation", async () => {
    const store = new MemorySessionStore();
    const session = (await engineOver(store)).session("s");
    const turn = await session.begin("first");
    await turn.addUser("second");
    const { response, request } = await turn.send(async (sent) => `saw ${sent.messages.length}`);
    expect(request.messages.map((message) => messageText(message))).toEqual(["first", "second"]);
    const { reply, session: stored } = await turn.commit({ content: response });
    expect(turn.settled).toBe(true);
    expect(reply && messageText(reply)).toBe("saw 2");
    expect(stored?.nextSeq).toBe(3);
    // A second turn writes after the first: the session expects the store's nextSeq it was told of.
    await using next = await session.begin("third");
    await next.send(async () => "ok");
    expect((await next.commit({ content: "ok" })).session?.nextSeq).toBe(5);
    const rows = await store.loadMessages("s", { strategy: "all" });
    expect(rows.map((message) => messageText(message))).toEqual(["first", "second", "saw 2", "third", "ok"]);
  });

  it("disposed of without a commit, is an interrupt: nothing stored, the session as before", async () => {
    const store = new MemorySessionStore();
    const session = (await engineOver(store)).session("s");
    await session.run("kept", async () => ({ content: "answer" }));
    {
      await using turn = await session.begin("dropped");
      await expect(
        turn.send(async () => {
          throw new Error("503 overloaded");
        }),
      ).rejects.toThrow("503");
    }
    expect((await session.history()).map((message) => messageText(message))).toEqual(["kept", "answer"]);
    expect(await store.loadMessages("s", { strategy: "all" })).toHaveLength(2);
  });

  it("recovers from a provider overflow and sends again, handing back the recovery among its events", async () => {
    const session = (await engineOver(new MemorySessionStore())).session("s");
    for (let index = 0; index < 3; index++) await session.run(`q${index}`, async () => ({ content: "a" }));
    const turn = await session.begin("too long now");
    const sent: PreparedRequest[] = [];
    const result = await turn.send(async (request) => {
      sent.push(request);
      if (sent.length === 1) throw overflowError();
      return "fits";
    });
    expect(sent).toHaveLength(2);
    expect(result.request).toBe(sent[1]);
    expect(result.recoveries.map((recovery) => recovery.stage)).toEqual(["trimmed"]);
    expect(result.events).toContain(result.recoveries[0]);
    await turn.commit({ content: result.response });
    expect(messageText((await session.history()).at(-1)!)).toBe("fits");
  });

  it("a third overflow in a row is thrown: both stages are spent", async () => {
    const session = (await engineOver(new MemorySessionStore())).session("s");
    await using turn = await session.begin("q");
    let calls = 0;
    await expect(
      turn.send(async () => {
        calls++;
        throw overflowError();
      }),
    ).rejects.toThrow("maximum context length");
    expect(calls).toBe(3);
  });
});
