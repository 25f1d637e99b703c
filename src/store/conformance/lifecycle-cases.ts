import { expect, it } from "vitest";
import { NotFoundError, ValidationError } from "../../errors/errors.ts";
import { fullTurn, texts, type ConformanceContext } from "./conformance-fixtures.ts";

const summary = (text: string) => ({ role: "user" as const, content: [{ type: "text" as const, text }] });

/** Fork, rename, delete, retention and sync state. */
export function lifecycleCases(context: ConformanceContext): void {
  it("forks at a message: the view up to it, with the rows its summaries replaced", async () => {
    const store = context.store();
    for (let turn = 1; turn <= 3; turn++)
      await store.appendTurn("s1", fullTurn(turn), { session: { owner: "ada", metadata: { k: 1 } } });
    await store.applyCompaction("s1", { fromSeq: 0, toSeq: 3, summary: summary("turn one") });
    context.advance(5000);
    const fork = await store.forkSession("s1", { atSeq: 7, id: "s1-fork" });
    expect(fork).toMatchObject({
      id: "s1-fork",
      parentId: "s1",
      forkSeq: 7,
      owner: "ada",
      metadata: { k: 1 },
      title: "instruction 1",
      messageCount: 9,
      turnCount: 2,
      nextSeq: 13,
      createdAt: context.now(),
    });
    expect(texts(await store.loadMessages("s1-fork"))).toEqual([
      "turn one",
      "instruction 2",
      "call:read",
      "result:output 2",
      "answer 2",
    ]);
    expect(
      (await store.loadMessages("s1-fork", { strategy: "all" })).every((m) => m.sessionId === "s1-fork"),
    ).toBe(true);
    const appended = await store.appendTurn("s1-fork", fullTurn(9), { expectedNextSeq: 13 });
    expect(appended.messages[0]).toMatchObject({ seq: 13, turn: 3 });
    expect((await store.loadMessages("s1")).length).toBe(9);
    await expect(store.forkSession("s1", { atSeq: 2 })).rejects.toBeInstanceOf(ValidationError);
    await expect(store.forkSession("s1", { atSeq: 99 })).rejects.toBeInstanceOf(NotFoundError);
    await expect(store.forkSession("s1", { atSeq: 4, id: "s1-fork" })).rejects.toBeInstanceOf(
      ValidationError,
    );
    await expect(store.forkSession("none", { atSeq: 0 })).rejects.toBeInstanceOf(NotFoundError);
    const titled = await store.forkSession("s1", { atSeq: 11, title: "Try B" });
    expect(titled).toMatchObject({ title: "Try B", forkSeq: 11, messageCount: 13, nextSeq: 13 });
    const atSummary = await store.forkSession("s1", { atSeq: 12 });
    expect(atSummary).toMatchObject({ messageCount: 5, turnCount: 1 });
  });

  it("renames a session", async () => {
    const store = context.store();
    await store.appendTurn("s1", fullTurn(1));
    const renamed = await store.renameSession("s1", "  A  better\ttitle ");
    expect(renamed.title).toBe("A better title");
    expect((await store.getSession("s1"))?.title).toBe("A better title");
    await expect(store.renameSession("s1", "   ")).rejects.toBeInstanceOf(ValidationError);
    await expect(store.renameSession("none", "x")).rejects.toBeInstanceOf(NotFoundError);
  });

  it("deletes a session with its rows, sync state and the blobs only it uses", async () => {
    const store = context.store();
    await store.appendTurn("s1", fullTurn(1));
    await store.appendTurn("s2", fullTurn(1));
    const own = await store.blobs.putText("s1", "only mine");
    const shared = await store.blobs.putText("s1", "shared output");
    expect(await store.blobs.putText("s2", "shared output")).toBe(shared);
    await store.setSyncState("s1", "codex", 3, "exec-1");
    await store.forkSession("s1", { atSeq: 3, id: "child" });
    expect(await store.deleteSession("s1")).toBe(true);
    expect(await store.getSession("s1")).toBeUndefined();
    await expect(store.loadMessages("s1")).rejects.toBeInstanceOf(NotFoundError);
    expect(await store.getSyncState("s1", "codex")).toBeUndefined();
    expect(await store.blobs.stat(shared)).toBeDefined();
    const child = await store.getSession("child");
    expect(child?.parentId).toBeUndefined();
    expect(await store.blobs.getText(own)).toBe("only mine");
    expect(await store.deleteSession("child")).toBe(true);
    expect(await store.blobs.stat(own)).toBeUndefined();
    expect(await store.blobs.getText(shared)).toBe("shared output");
    expect(await store.deleteSession("s1")).toBe(false);
    expect((await store.listSessions()).sessions.map((session) => session.id)).toEqual(["s2"]);
  });

  it("cleans up sessions older than N days, and keeps everything for 0", async () => {
    const store = context.store();
    await store.appendTurn("old", fullTurn(1));
    await store.blobs.putText("old", "old output");
    context.advance(20 * 86_400_000);
    await store.appendTurn("recent", fullTurn(1));
    context.advance(15 * 86_400_000);
    expect(await store.cleanup(0)).toEqual({ deletedSessions: 0, deletedBlobs: 0 });
    expect(await store.getSession("old")).toBeDefined();
    expect(await store.cleanup(30)).toEqual({ deletedSessions: 1, deletedBlobs: 1 });
    expect(await store.getSession("old")).toBeUndefined();
    expect(await store.getSession("recent")).toBeDefined();
    await expect(store.cleanup(-1)).rejects.toBeInstanceOf(ValidationError);
  });

  it("keeps per-agent sync state and executor session ids", async () => {
    const store = context.store();
    await expect(store.setSyncState("s1", "codex", 1)).rejects.toBeInstanceOf(NotFoundError);
    await store.appendTurn("s1", fullTurn(1));
    expect(await store.getSyncState("s1", "codex")).toBeUndefined();
    const state = await store.setSyncState("s1", "codex", { seq: 3, offset: 10 }, "exec-1");
    expect(state).toEqual({
      agent: "codex",
      cursor: { seq: 3, offset: 10 },
      executorSessionId: "exec-1",
      updatedAt: context.now(),
    });
    await store.setSyncState("s1", "claude", 2);
    context.advance(1000);
    await store.setSyncState("s1", "codex", { seq: 4, offset: 0 }, "exec-2");
    expect(await store.getSyncState("s1", "codex")).toEqual({
      agent: "codex",
      cursor: { seq: 4, offset: 0 },
      executorSessionId: "exec-2",
      updatedAt: context.now(),
    });
    expect(await store.getSyncState("s1", "claude")).toMatchObject({ cursor: 2 });
    expect((await store.getSession("s1"))?.executorSessionIds).toEqual({ codex: "exec-2" });
    await expect(store.setSyncState("s1", "", 1)).rejects.toBeInstanceOf(ValidationError);
  });
}
