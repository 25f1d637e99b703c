import { describe, expect, it } from "vitest";
import { messageText } from "../model/blocks.ts";
import type { Message } from "../model/message.ts";
import { sequentialIds } from "../model/ids.ts";
import { MemorySessionStore } from "../store/memory/index.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { createContextEngine } from "./context-engine.ts";

/** A memory store that counts its `appendTurn` calls (one per transaction). */
class CountingStore extends MemorySessionStore {
  appends = 0;

  override appendTurn(...args: Parameters<MemorySessionStore["appendTurn"]>) {
    this.appends++;
    return super.appendTurn(...args);
  }
}

async function engineOver(store: MemorySessionStore) {
  return createContextEngine({
    store,
    contextWindow: 16_000,
    maxOutputTokens: 2_000,
    tokenCounter: new FakeTokenCounter(),
    summarizer: new FakeSummarizer(),
    ids: sequentialIds(),
  });
}

async function storedTexts(store: MemorySessionStore, id: string): Promise<string[]> {
  const rows = await store.loadMessages(id).catch(() => []);
  return rows.map((message) => `${message.role}:${messageText(message)}`);
}

describe("EngineSession: the messages of one request commit together", () => {
  it("commits several user messages with the reply in one transaction", async () => {
    const store = new CountingStore();
    const session = (await engineOver(store)).session("doc");
    await session.addUser("Here is the document: …");
    await session.addUser("Summarise it.");
    expect(store.appends).toBe(0);
    const request = await session.prepare();
    expect(request.messages.map((message) => messageText(message))).toEqual([
      "Here is the document: …",
      "Summarise it.",
    ]);
    await session.recordAssistant({ content: "A summary." });
    await session.commit();
    expect(store.appends).toBe(1);
    expect(await storedTexts(store, "doc")).toEqual([
      "user:Here is the document: …",
      "user:Summarise it.",
      "assistant:A summary.",
    ]);
  });

  it("a failed request leaves nothing behind: interrupt removes every uncommitted message, and a retry stores each once", async () => {
    const store = new CountingStore();
    const session = (await engineOver(store)).session("retry");
    await session.addUser("first");
    await session.recordAssistant({ content: "one" });
    await session.commit();
    await session.addUser("Here is the document: …");
    await session.addUser("Summarise it.");
    await session.prepare(); // the model call fails
    const removed = await session.interrupt();
    expect(removed.map((message) => messageText(message))).toEqual([
      "Here is the document: …",
      "Summarise it.",
    ]);
    expect(store.appends).toBe(1);
    expect((await session.history()).map((message) => messageText(message))).toEqual(["first", "one"]);

    await session.addUser("Here is the document: …");
    await session.addUser("Summarise it.");
    await session.recordAssistant({ content: "A summary." });
    await session.commit();
    expect(await storedTexts(store, "retry")).toEqual([
      "user:first",
      "assistant:one",
      "user:Here is the document: …",
      "user:Summarise it.",
      "assistant:A summary.",
    ]);
  });

  it("a user message after an uncommitted reply commits that exchange first, unless keepOpenTurn", async () => {
    const store = new CountingStore();
    const engine = await engineOver(store);
    const session = engine.session("implicit");
    await session.addUser("first");
    await session.recordAssistant({ content: "one" });
    await session.addUser("second"); // the exchange before it is committed
    expect(await storedTexts(store, "implicit")).toEqual(["user:first", "assistant:one"]);

    const kept = engine.session("kept");
    await kept.addUser("a question", { keepOpenTurn: true });
    await kept.recordAssistant({ content: "an earlier answer the client sent along" });
    await kept.addUser("the new question", { keepOpenTurn: true });
    expect(store.appends).toBe(1);
    expect(await kept.interrupt()).toHaveLength(3);
    expect(await storedTexts(store, "kept")).toEqual([]);
    expect(await kept.history()).toEqual([]);
  });

  it("runs concurrent turns of one session one after another, in call order", async () => {
    const store = new CountingStore();
    const session = (await engineOver(store)).session("double-submit");
    const sent: string[][] = [];
    const slow =
      (tag: string, ms: number, fail = false) =>
      async (request: { messages: readonly Message[] }) => {
        sent.push(request.messages.map((message) => messageText(message)));
        await new Promise((resolve) => setTimeout(resolve, ms));
        if (fail) throw new Error(`${tag} failed`);
        return { content: `reply to ${tag}` };
      };
    const results = await Promise.allSettled([
      session.run("question A", slow("A", 30)),
      session.run("question B", slow("B", 5, true)),
      session.run("question C", slow("C", 5)),
    ]);
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(sent).toEqual([
      ["question A"],
      ["question A", "reply to A", "question B"],
      ["question A", "reply to A", "question C"],
    ]);
    expect(await storedTexts(store, "double-submit")).toEqual([
      "user:question A",
      "assistant:reply to A",
      "user:question C",
      "assistant:reply to C",
    ]);
  });
});
