import { expect, it } from "vitest";
import { ParseError, SessionExistsError, ValidationError } from "../../errors/errors.ts";
import { exportSessionsJsonl, importSessionsJsonl } from "../jsonl/index.ts";
import type { SessionStore } from "../session-store.ts";
import { fullTurn, reply, user, type ConformanceContext } from "./conformance-fixtures.ts";

async function richSession(store: SessionStore): Promise<void> {
  await store.appendTurn("rich", fullTurn(1), {
    session: { owner: "ada", agent: "coder", metadata: { z: 1, a: [1, "x"] } },
  });
  await store.appendTurn("rich", [
    {
      role: "user",
      content: [
        {
          type: "image",
          mediaType: "image/png",
          data: Buffer.alloc(3000, 7).toString("base64"),
          detail: "low",
        },
      ],
    },
    {
      ...reply("an image", { input: 10, output: 5, cacheRead: 2 }),
      content: [
        { type: "text", text: "an image" },
        { type: "text", text: "I won't describe it.", refusal: true },
      ],
    },
  ]);
  await store.appendTurn("rich", fullTurn(3));
  await store.applyCompaction("rich", {
    fromSeq: 0,
    toSeq: 3,
    summary: { role: "user", content: [{ type: "text", text: "summary" }] },
  });
  await store.blobs.putText("rich", "offloaded output");
  await store.setSyncState("rich", "codex", { seq: 5 }, "exec-9");
  await store.forkSession("rich", { atSeq: 5, id: "rich-fork" });
}

/** Dump, restore and the ctxkit JSONL round trip. */
export function portabilityCases(context: ConformanceContext): void {
  it("exports and imports ctxkit JSONL losslessly, byte for byte", async () => {
    const store = context.store();
    await richSession(store);
    const exported = await exportSessionsJsonl(store, ["rich", "rich-fork"]);
    expect(exported.split("\n")[0]).toBe('{"type":"ctxkit","version":1}');
    // Free-form JSON keeps its key order (PostgreSQL's jsonb would sort it).
    expect(exported).toContain('"metadata":{"z":1,"a":[1,"x"]}');
    const target = context.track(await context.backend.open(context.options()));
    const result = await importSessionsJsonl(target, exported, { source: "export.jsonl" });
    expect(result.sessions).toEqual([
      { id: "rich", messages: 11, turns: 3, toolCalls: 2 },
      { id: "rich-fork", messages: 7, turns: 2, toolCalls: 1 },
    ]);
    expect(await exportSessionsJsonl(target, ["rich", "rich-fork"])).toBe(exported);
    expect(await target.dumpSession("rich")).toEqual(await store.dumpSession("rich"));
    expect(await target.getSession("rich-fork")).toEqual(await store.getSession("rich-fork"));
    expect(await target.loadMessages("rich", { media: "inline" })).toEqual(
      await store.loadMessages("rich", { media: "inline" }),
    );
    // Optional block fields (an image's detail, a refusal) are kept through the store and the export.
    const blocks = (await target.loadMessages("rich")).flatMap((message) => message.content);
    expect(blocks).toContainEqual(expect.objectContaining({ type: "image", detail: "low" }));
    expect(blocks).toContainEqual({ type: "text", text: "I won't describe it.", refusal: true });
  });

  it("refuses to import over an existing session unless told to replace it", async () => {
    const store = context.store();
    await store.appendTurn("s1", fullTurn(1));
    const exported = await exportSessionsJsonl(store, ["s1"]);
    await store.appendTurn("s1", fullTurn(2));
    await expect(importSessionsJsonl(store, exported, { source: "x.jsonl" })).rejects.toBeInstanceOf(
      ValidationError,
    );
    expect((await store.getSession("s1"))?.messageCount).toBe(8);
    await importSessionsJsonl(store, exported, { source: "x.jsonl", onExisting: "replace" });
    expect((await store.getSession("s1"))?.messageCount).toBe(4);
    expect(await exportSessionsJsonl(store, ["s1"])).toBe(exported);
  });

  it("rejects malformed JSONL with the line number and stores nothing", async () => {
    const store = context.store();
    await store.appendTurn("kept", [user("keep me")]);
    const source = context.track(await context.backend.open(context.options()));
    await source.appendTurn("new", fullTurn(1));
    const lines = (await exportSessionsJsonl(source, ["new"])).trimEnd().split("\n");
    const cases = [
      [...lines.slice(0, 4), "{not json", ...lines.slice(4)],
      [...lines.slice(0, 2), lines[2]!.replace('"nextSeq":4', '"nextSeq":"four"'), ...lines.slice(3)],
      [...lines, '{"type":"message","id":"x"}'],
      [
        ...lines,
        '{"type":"blob","session":"new","ref":"blob:1","mediaType":"text/plain","encoding":"utf8","data":"x"}',
      ],
    ];
    for (const [index, broken] of cases.entries()) {
      const error = await importSessionsJsonl(store, `${broken.join("\n")}\n`, { source: "bad.jsonl" }).catch(
        (caught: unknown) => caught,
      );
      expect(error, `case ${index}`).toBeInstanceOf(index === 3 ? ValidationError : ParseError);
      if (index < 3) expect((error as Error).message).toMatch(/^bad\.jsonl:\d+: /);
      expect(await store.getSession("new")).toBeUndefined();
    }
    expect((await store.loadMessages("kept")).length).toBe(1);
  });

  it("restores a batch of sessions all or nothing; existing ones refuse it, or are replaced or skipped", async () => {
    const store = context.store();
    const source = context.track(await context.backend.open(context.options()));
    for (const id of ["a", "b", "c"]) await source.appendTurn(id, fullTurn(1));
    const dumps = await Promise.all(["a", "b", "c"].map((id) => source.dumpSession(id)));
    await store.appendTurn("b", [user("the store's own b")]);
    const ids = async () => (await store.listSessions()).sessions.map((session) => session.id).sort();

    const refused = await store.restoreSessions(dumps).catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(SessionExistsError);
    expect(refused).toMatchObject({ sessionId: "b" });
    expect(await ids()).toEqual(["b"]);

    // A bad dump late in the batch: nothing of the batch is written.
    const foreign = { ...dumps[2]!, rows: dumps[2]!.rows.map((row) => ({ ...row, position: -1 })) };
    await expect(store.restoreSessions([dumps[0]!, foreign], { onExisting: "skip" })).rejects.toBeInstanceOf(
      ValidationError,
    );
    await expect(store.restoreSessions([dumps[0]!, dumps[0]!])).rejects.toThrow(/appears twice/);
    expect(await ids()).toEqual(["b"]);

    const progress: number[] = [];
    const skipping = await store.restoreSessions(dumps, {
      onExisting: "skip",
      onProgress: (done, total) => progress.push(done, total),
    });
    expect(skipping.restored.map((session) => session.id)).toEqual(["a", "c"]);
    expect(skipping.skipped).toEqual(["b"]);
    expect(progress).toEqual([1, 3, 2, 3, 3, 3]);
    expect((await store.getSession("b"))?.messageCount).toBe(1);
    expect(await store.dumpSession("a")).toEqual(dumps[0]);

    const replacing = await store.restoreSessions(dumps, { onExisting: "replace" });
    expect(replacing).toEqual({ restored: dumps.map((dump) => dump.session), skipped: [] });
    expect(await store.dumpSession("b")).toEqual(dumps[1]);
  });
}
