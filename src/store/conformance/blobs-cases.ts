import { expect, it } from "vitest";
import type { ContentBlock } from "../../model/message.ts";
import { blobRef, sessionOffloadStore } from "../blob-store.ts";
import { reply, user, type ConformanceContext } from "./conformance-fixtures.ts";

/** Blob put/get/delete and media kept out of message rows. */
export function blobCases(context: ConformanceContext): void {
  it("stores blobs once by content and reads them back by range", async () => {
    const store = context.store();
    await store.appendTurn("s1", [user("go")]);
    const text = "ünïcode line\n".repeat(1000);
    const ref = await store.blobs.putText("s1", text);
    expect(ref).toBe(blobRef(new TextEncoder().encode(text)));
    // Governance names an output before storing it (offloads prepared ahead): the same reference.
    expect(sessionOffloadStore(store.blobs, "s1").refFor(text)).toBe(ref);
    expect(await store.blobs.putText("s1", text)).toBe(ref);
    expect(await store.blobs.getText(ref)).toBe(text);
    expect(await store.blobs.getText(ref, { offset: 13, limit: 7 })).toBe(text.slice(13, 20));
    expect(await store.blobs.getText(ref, { offset: text.length + 5 })).toBe("");
    const bytes = new Uint8Array(3000).map((_, index) => index % 251);
    const binary = await store.blobs.putBytes("s1", bytes, "image/png");
    expect(await store.blobs.getBytes(binary, { offset: 1000, limit: 4 })).toEqual(bytes.slice(1000, 1004));
    expect(await store.blobs.getBytes(binary)).toEqual(bytes);
    expect(await store.blobs.stat(binary)).toEqual({
      ref: binary,
      mediaType: "image/png",
      size: 3000,
      isText: false,
    });
    expect(await store.blobs.stat(ref)).toMatchObject({ mediaType: "text/plain", isText: true });
    expect((await store.blobs.list("s1")).map((info) => info.ref)).toEqual([ref, binary].sort());
    expect(await store.blobs.getText(`blob:${"0".repeat(64)}`)).toBeUndefined();
    expect(await store.blobs.delete("s1", ref)).toBe(true);
    expect(await store.blobs.stat(ref)).toBeUndefined();
    expect(await store.blobs.delete("s1", ref)).toBe(false);
  });

  it("moves large inline media to blobs and puts it back on request", async () => {
    const store = context.store();
    const data = Buffer.from(new Uint8Array(5000).map((_, index) => (index * 7) % 256)).toString("base64");
    const small = { type: "image" as const, mediaType: "image/png", data: "iVBORw0KGgo=" };
    const screenshot: ContentBlock = {
      type: "tool-result",
      callId: "c1",
      toolName: "screenshot",
      content: "taken",
      attachments: [{ type: "image", mediaType: "image/png", data }],
    };
    const { messages } = await store.appendTurn("s1", [
      {
        role: "user",
        content: [
          { type: "text", text: "look" },
          small,
          { type: "file", mediaType: "application/pdf", filename: "a.pdf", data },
        ],
      },
      { role: "assistant", content: [{ type: "tool-call", id: "c1", name: "screenshot", input: {} }] },
      { role: "tool", content: [screenshot] },
      reply("seen"),
    ]);
    const stored = messages[0]!.content;
    expect(stored[1]).toEqual(small);
    expect(stored[2]).toEqual({
      type: "file",
      mediaType: "application/pdf",
      filename: "a.pdf",
      ref: expect.stringMatching(/^blob:/),
    });
    const refs = await store.blobs.list("s1");
    expect(refs).toHaveLength(1);
    expect(refs[0]).toMatchObject({ size: 5000, isText: false });
    const loaded = await store.loadMessages("s1");
    expect(loaded).toEqual(messages);
    expect(JSON.stringify(loaded)).not.toContain(data);
    const inline = await store.loadMessages("s1", { media: "inline" });
    expect(inline[0]!.content[2]).toEqual({
      type: "file",
      mediaType: "application/pdf",
      filename: "a.pdf",
      data,
    });
    expect(inline[2]!.content[0]).toEqual(screenshot);
  });
}
