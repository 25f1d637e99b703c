import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NotFoundError, ValidationError } from "../errors/errors.ts";
import { sequentialIds } from "../model/ids.ts";
import { Conversation } from "./conversation.ts";

const fixedClock = () => new Date("2026-01-01T00:00:00.000Z");
const create = () => new Conversation({ sessionId: "s1", ids: sequentialIds(), clock: fixedClock });

describe("Conversation", () => {
  it("numbers turns and sequences and groups messages into turns", async () => {
    const conversation = create();
    await conversation.appendUser("first");
    await conversation.appendAssistant({ content: [{ type: "tool-call", id: "c1", name: "ls", input: {} }] });
    await conversation.appendToolResult({ callId: "c1", toolName: "ls", content: "a b" });
    await conversation.appendAssistant({ content: "done", usage: { input: 10, output: 2 } });
    await conversation.appendUser("second");
    const messages = conversation.snapshot().messages;
    expect(messages.map((message) => message.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(messages.map((message) => message.turn)).toEqual([1, 1, 1, 1, 2]);
    expect(conversation.turns().map((turn) => turn.messages.length)).toEqual([4, 1]);
    expect(messages[3]!.usage).toEqual({ input: 10, output: 2 });
  });

  it("keeps a snapshot unchanged by later writes, interrupts and clears", async () => {
    const conversation = create();
    await conversation.appendUser("one");
    const before = conversation.snapshot();
    await conversation.appendAssistant({ content: "reply" });
    await conversation.appendUser("two");
    await conversation.interrupt();
    await conversation.clear();
    expect(before.length).toBe(1);
    expect(before.messages.map((message) => message.seq)).toEqual([0]);
    expect(conversation.length).toBe(0);
  });

  it("update puts a changed message in place; earlier snapshots and the open turn stay as they were", async () => {
    const conversation = create();
    await conversation.appendUser("list");
    await conversation.appendAssistant({ content: [{ type: "tool-call", id: "c1", name: "ls", input: {} }] });
    const result = await conversation.appendToolResult({ callId: "c1", toolName: "ls", content: "a b" });
    const before = conversation.snapshot();
    const changed = { ...result, content: [{ ...result.content[0]!, compactSummary: "two files" }] };
    await conversation.update(changed);
    expect(conversation.snapshot().messages[2]).toEqual(changed);
    expect(Object.isFrozen(conversation.snapshot().messages[2])).toBe(true);
    expect(before.messages[2]).toBe(result);
    expect(conversation.hasOpenTurn).toBe(true);
    expect(await conversation.interrupt()).toHaveLength(3);
    await expect(conversation.update(changed as typeof result)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("freezes messages so no reader can change the history", async () => {
    const conversation = create();
    const message = await conversation.appendUser("hello");
    expect(Object.isFrozen(message)).toBe(true);
    expect(Object.isFrozen(message.content[0])).toBe(true);
  });

  it("interrupt aborts the in-flight request and removes the whole open turn", async () => {
    const conversation = create();
    await conversation.appendUser("kept");
    await conversation.appendAssistant({ content: "kept reply" });
    conversation.commitTurn();
    await conversation.appendUser("to be interrupted");
    const signal = conversation.beginRequest();
    await conversation.appendAssistant({
      content: [{ type: "tool-call", id: "c9", name: "bash", input: { command: "sleep 100" } }],
    });
    const removed = await conversation.interrupt();
    expect(signal.aborted).toBe(true);
    expect(removed.map((message) => message.role)).toEqual(["user", "assistant"]);
    expect(conversation.snapshot().messages.map((message) => message.role)).toEqual(["user", "assistant"]);
    // The next turn takes the interrupted turn's number again.
    const next = await conversation.appendUser("next");
    expect(next.turn).toBe(2);
  });

  it("rejects invalid input with a typed error and keeps the history", async () => {
    const conversation = create();
    await conversation.appendUser("ok");
    expect(() => conversation.appendToolResult({ callId: "", toolName: "x", content: "y" })).toThrow(
      ValidationError,
    );
    expect(() => conversation.appendUser(42 as unknown as string)).toThrow(/invalid user content/);
    expect(conversation.length).toBe(1);
  });

  it("serialises concurrent writers: an exclusive turn never interleaves with other appends", async () => {
    const conversation = create();
    const turn = conversation.exclusive(async (writer) => {
      writer.append({ role: "user", content: [{ type: "text", text: "turn A" }] });
      await new Promise((resolve) => setTimeout(resolve, 5));
      writer.append({ role: "assistant", content: [{ type: "text", text: "reply A" }] });
    });
    const other = conversation.appendUser("turn B");
    await Promise.all([turn, other]);
    expect(conversation.snapshot().messages.map((message) => message.content[0])).toEqual([
      { type: "text", text: "turn A" },
      { type: "text", text: "reply A" },
      { type: "text", text: "turn B" },
    ]);
  });

  it("property: any interleaving of writes and snapshots leaves every snapshot as it was taken", async () => {
    type Operation = { kind: "user" | "assistant" | "snapshot" | "interrupt" | "clear" | "commit" };
    const operation = fc.constantFrom<Operation["kind"]>(
      "user",
      "assistant",
      "snapshot",
      "interrupt",
      "clear",
      "commit",
    );
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { maxLength: 40 }), async (operations) => {
        const conversation = create();
        const taken: { snapshot: ReturnType<Conversation["snapshot"]>; ids: string[] }[] = [];
        for (const kind of operations) {
          if (kind === "user") await conversation.appendUser("u");
          else if (kind === "assistant") await conversation.appendAssistant({ content: "a" });
          else if (kind === "interrupt") await conversation.interrupt();
          else if (kind === "clear") await conversation.clear();
          else if (kind === "commit") conversation.commitTurn();
          else {
            const snapshot = conversation.snapshot();
            taken.push({ snapshot, ids: snapshot.messages.map((message) => message.id) });
          }
        }
        for (const { snapshot, ids } of taken) {
          expect(snapshot.messages.map((message) => message.id)).toEqual(ids);
          expect(snapshot.length).toBe(ids.length);
        }
        const seqs = conversation.snapshot().messages.map((message) => message.seq);
        expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
        expect(new Set(seqs).size).toBe(seqs.length);
      }),
    );
  });
});
