import { expect, it } from "vitest";
import { MissingBlobError } from "../../errors/errors.ts";
import type { ContentBlock } from "../../model/message.ts";
import { exportSessionsJsonl, importSessionsJsonl } from "../jsonl/index.ts";
import type { SessionDump, SessionStore } from "../session-store.ts";
import { reply, type ConformanceContext } from "./conformance-fixtures.ts";

const image = (fill: number): ContentBlock => ({
  type: "image",
  mediaType: "image/png",
  data: Buffer.alloc(3000, fill).toString("base64"),
});

/** A session with an image (message 0) and a screenshot attached to a tool result (message 2). */
async function mediaSession(store: SessionStore, id: string): Promise<SessionDump> {
  await store.appendTurn(id, [
    { role: "user", content: [{ type: "text", text: "look" }, image(7)] },
    { role: "assistant", content: [{ type: "tool-call", id: `${id}-c1`, name: "screenshot", input: {} }] },
    {
      role: "tool",
      content: [
        {
          type: "tool-result",
          callId: `${id}-c1`,
          toolName: "screenshot",
          content: "taken",
          attachments: [image(9) as Extract<ContentBlock, { type: "image" }>],
        },
      ],
    },
    reply("seen"),
  ]);
  return store.dumpSession(id);
}

/** The dump as another session: new session and message ids, no blobs of its own. */
function copyWithoutBlobs(dump: SessionDump, id: string): SessionDump {
  return {
    ...dump,
    session: { ...dump.session, id },
    rows: dump.rows.map((row) => ({
      ...row,
      message: { ...row.message, id: `${id}-${row.message.id}`, sessionId: id },
    })),
    blobs: [],
  };
}

function refOf(block: ContentBlock | undefined): string {
  if (block?.type === "image") return block.ref ?? "";
  if (block?.type === "tool-result") return block.attachments?.[0]?.ref ?? "";
  return "";
}

/** Restoring sessions whose media refer to blobs: never accepted when a blob is nowhere to be found. */
export function mediaRestoreCases(context: ConformanceContext): void {
  it("refuses a dump whose media refer to a blob neither it nor the store holds, writing nothing", async () => {
    const source = context.store();
    await source.appendTurn("plain", [
      { role: "user", content: [{ type: "text", text: "hi" }] },
      reply("hello"),
    ]);
    const plain = await source.dumpSession("plain");
    const dump = await mediaSession(source, "img");
    const screenshot = refOf(dump.rows[2]?.message.content[0]);
    expect(dump.blobs.map((blob) => blob.ref)).toContain(screenshot);
    const target = context.track(await context.backend.open(context.options()));
    const lacking = { ...dump, blobs: dump.blobs.filter((blob) => blob.ref !== screenshot) };

    const refused = await target.restoreSessions([plain, lacking]).catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(MissingBlobError);
    expect(refused).toMatchObject({ code: "invalid_input", sessionId: "img", seq: 2, ref: screenshot });
    expect((refused as Error).message).toMatch(/message 2 of session img refers to media blob:.*export/);
    await expect(target.restoreSession(lacking)).rejects.toBeInstanceOf(MissingBlobError);
    expect((await target.listSessions()).sessions).toEqual([]);
    expect(await target.blobs.stat(refOf(dump.rows[0]?.message.content[1]))).toBeUndefined();

    const exported = await exportSessionsJsonl(source, ["plain", "img"]);
    const withoutBlobs = exported
      .split("\n")
      .filter((line) => !line.startsWith('{"type":"blob"'))
      .join("\n");
    await expect(
      importSessionsJsonl(target, withoutBlobs, { source: "no-media.jsonl" }),
    ).rejects.toMatchObject({ name: "MissingBlobError", sessionId: "img", seq: 0 });
    expect((await target.listSessions()).sessions).toEqual([]);
  });

  it("takes a blob a dump lacks from the store or the batch, and keeps it linked to the restored session", async () => {
    const store = context.store();
    const dump = await mediaSession(store, "img");
    const inline = await store.loadMessages("img", { media: "inline" });
    const sameAsOriginal = async (id: string) =>
      expect((await store.loadMessages(id, { media: "inline" })).map((message) => message.content)).toEqual(
        inline.map((message) => message.content),
      );

    await store.restoreSession(copyWithoutBlobs(dump, "copy"));
    expect((await store.blobs.list("copy")).map((info) => info.ref)).toEqual(dump.blobs.map((b) => b.ref));
    expect(await store.deleteSession("img")).toBe(true);
    await sameAsOriginal("copy");
    // Replacing the only session that links the blobs with a dump that lacks them keeps them.
    await store.restoreSession(copyWithoutBlobs(dump, "copy"), { onExisting: "replace" });
    await sameAsOriginal("copy");

    const target = context.track(await context.backend.open(context.options()));
    await target.restoreSessions([copyWithoutBlobs(dump, "later"), dump]);
    expect(await target.deleteSession("img")).toBe(true);
    expect(
      (await target.loadMessages("later", { media: "inline" })).map((message) => message.content),
    ).toEqual(inline.map((message) => message.content));
  });
}
