import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { ConcurrentWriteError, CtxkitError, NotFoundError, ValidationError } from "../../errors/index.ts";
import type { MessageInput } from "../../model/message.ts";
import { openSqliteSessionStore } from "./open-sqlite-session-store.ts";

const folder = mkdtempSync(join(tmpdir(), "ctxkit-group-"));
let files = 0;
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const turn = (text: string): MessageInput[] => [
  { role: "user", content: [{ type: "text", text }] },
  { role: "assistant", content: [{ type: "text", text: `re: ${text}` }] },
];

const open = (writer: "worker" | "inline" | undefined = "worker") =>
  openSqliteSessionStore({ path: join(folder, `group-${++files}.db`), retentionDays: 0, writer });

describe("SQLite writer thread (group commit)", () => {
  it("runs when asked for a file; inline by default, and always for :memory:", async () => {
    const worker = await open("worker");
    const inline = await openSqliteSessionStore({
      path: join(folder, `group-${++files}.db`),
      retentionDays: 0,
    });
    const memory = await openSqliteSessionStore({ path: ":memory:", writer: "worker" });
    expect([worker.writerMode, inline.writerMode, memory.writerMode]).toEqual(["worker", "inline", "inline"]);
    await Promise.all([worker.close(), inline.close(), memory.close()]);
  });

  it("a writerScript that is not the writer's script fails the open with a store_error naming it, and frees the file", async () => {
    const path = join(folder, `group-${++files}.db`);
    const missing = join(folder, "no-such-writer.js");
    const error = await openSqliteSessionStore({ path, writer: "worker", writerScript: missing }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(CtxkitError);
    expect((error as CtxkitError).code).toBe("store_error");
    expect((error as Error).message).toContain(missing);
    expect((error as Error).message).toContain("writerScript");
    const store = await openSqliteSessionStore({ path, writer: "worker" });
    await store.appendTurn("s", turn("after a failed open"));
    expect((await store.getSession("s"))?.nextSeq).toBe(2);
    await store.close();
  });

  it("commits concurrent turns in fewer transactions, each visible to another connection once acknowledged", async () => {
    const store = await open();
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, index) => store.appendTurn(`s${index}`, turn(`hello ${index}`))),
    );
    expect(results.map((result) => result.session.nextSeq)).toEqual(Array(40).fill(2));
    const stats = store.writerStats!;
    expect(stats.writes).toBe(40);
    expect(stats.groups).toBeLessThan(40);
    const raw = new DatabaseSync(store.location, { readOnly: true });
    expect(raw.prepare("SELECT count(*) AS n FROM messages").get()).toEqual({ n: 80 });
    raw.close();
    await store.close();
  });

  it("fails only the stale or invalid writes of a group; the others commit", async () => {
    const store = await open();
    await store.appendTurn("shared", turn("first"));
    const outcomes = await Promise.allSettled([
      store.appendTurn("shared", turn("a"), { expectedNextSeq: 2 }),
      store.appendTurn("other-1", turn("b")),
      store.appendTurn("shared", turn("c"), { expectedNextSeq: 2 }),
      store.appendTurn("other-2", [{ role: "nobody" } as unknown as MessageInput]),
      store.appendTurn("other-3", turn("d")),
      store.renameSession("missing", "x"),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      "fulfilled",
      "fulfilled",
      "rejected",
      "rejected",
      "fulfilled",
      "rejected",
    ]);
    const reasons = outcomes.flatMap((outcome) => (outcome.status === "rejected" ? [outcome.reason] : []));
    expect(reasons[0]).toBeInstanceOf(ConcurrentWriteError);
    expect(reasons[1]).toBeInstanceOf(ValidationError);
    expect(reasons[2]).toBeInstanceOf(NotFoundError);
    expect(reasons.every((reason) => CtxkitError.isInstance(reason))).toBe(true);
    expect((reasons[0] as CtxkitError).code).toBe("concurrent_write");
    expect((await store.loadMessages("shared")).map((message) => message.seq)).toEqual([0, 1, 2, 3]);
    expect(await store.getSession("other-2")).toBeUndefined();
    expect((await store.getSession("other-3"))?.messageCount).toBe(2);
    await store.close();
  });

  it("runs compactions, sync states, renames and deletes through the writer with the caller's clock and ids", async () => {
    let time = Date.parse("2025-05-01T00:00:00Z");
    let next = 0;
    const store = await openSqliteSessionStore({
      path: join(folder, `group-${++files}.db`),
      clock: () => new Date(time),
      ids: (prefix) => `${prefix}-${++next}`,
    });
    const { messages } = await store.appendTurn("s", turn("one"));
    expect(messages.map((message) => [message.id, message.createdAt])).toEqual([
      ["msg-1", "2025-05-01T00:00:00.000Z"],
      ["msg-2", "2025-05-01T00:00:00.000Z"],
    ]);
    time += 60_000;
    const summary = await store.applyCompaction("s", {
      fromSeq: 0,
      toSeq: 1,
      summary: { role: "user", content: [{ type: "text", text: "summary" }] },
    });
    expect([summary.id, summary.createdAt]).toEqual(["sum-3", "2025-05-01T00:01:00.000Z"]);
    expect((await store.setSyncState("s", "claude", { line: 3 })).updatedAt).toBe("2025-05-01T00:01:00.000Z");
    expect((await store.renameSession("s", "Renamed")).title).toBe("Renamed");
    expect(await store.deleteSession("s")).toBe(true);
    expect(await store.getSession("s")).toBeUndefined();
    await store.close();
  });

  it("writes blobs through the writer, with the turns around them; they are readable here once acknowledged", async () => {
    const store = await open();
    await store.appendTurn("s", turn("one"));
    const before = store.writerStats!.writes;
    const [ref, , bytesRef] = await Promise.all([
      store.blobs.putText("s", "an offloaded tool output", "text/plain"),
      store.appendTurn("s", turn("two")),
      store.blobs.putBytes("s", new Uint8Array([1, 2, 3]), "application/octet-stream"),
    ]);
    expect(store.writerStats!.writes).toBe(before + 3);
    expect(await store.blobs.getText(ref)).toBe("an offloaded tool output");
    expect(await store.blobs.getBytes(bytesRef)).toEqual(new Uint8Array([1, 2, 3]));
    expect((await store.blobs.list("s")).map((blob) => blob.ref).sort()).toEqual([ref, bytesRef].sort());
    expect(await store.blobs.delete("s", ref)).toBe(true);
    expect(await store.blobs.getText(ref)).toBeUndefined();
    expect(store.writerStats!.writes).toBe(before + 4);
    await store.close();
  });

  it("refuses writes after close", async () => {
    const store = await open();
    await store.close();
    await expect(store.appendTurn("s", turn("late"))).rejects.toMatchObject({ code: "store_error" });
  });
});
