import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ImageBlock } from "../model/message.ts";
import { openSqliteSessionStore } from "../store/sqlite/index.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { createContextEngine } from "./context-engine.ts";

const folder = mkdtempSync(join(tmpdir(), "ctxkit-restored-media-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

// Larger than the store's inline limit (1,024 base64 characters): kept in the blob store as a reference.
const screenshot = Buffer.alloc(3_000, 7).toString("base64");

async function storedSessionWithImage(path: string) {
  const store = await openSqliteSessionStore({ path });
  const engine = await createContextEngine({
    store,
    contextWindow: 64_000,
    tokenCounter: new FakeTokenCounter(),
  });
  const session = engine.session("shots");
  await session.addUser([
    { type: "text", text: "What does this screen show?" },
    { type: "image", mediaType: "image/png", data: screenshot },
  ]);
  await session.prepare();
  await session.recordAssistant({ content: "A login form." });
  await session.commit();
  return store;
}

describe("a session resumed with media kept in the blob store", () => {
  it("prepares requests every provider format can take, with the media's data read back", async () => {
    const store = await storedSessionWithImage(join(folder, "inline.db"));
    try {
      const engine = await createContextEngine({
        store,
        contextWindow: 64_000,
        tokenCounter: new FakeTokenCounter(),
      });
      const session = engine.session("shots");
      await session.addUser("And now?");
      const request = await session.prepare();
      const image = request.messages[0]!.content[1] as ImageBlock;
      expect(image).toMatchObject({ type: "image", data: screenshot });
      expect(image.ref).toBeUndefined();
      expect(JSON.stringify(request.toOpenAIChat())).toContain(screenshot);
      expect(JSON.stringify(request.toAnthropic())).toContain(screenshot);
      expect(JSON.stringify(request.toGemini())).toContain(screenshot);
      expect(request.toAiSdk().messages[0]).toMatchObject({
        role: "user",
        content: [{ type: "text" }, { type: "file", mediaType: "image/png" }],
      });
      // The stored message keeps its reference: only the request carries the data.
      const [stored] = await store.loadMessages("shots");
      expect((stored!.content[1] as ImageBlock).ref).toMatch(/^blob:/);
    } finally {
      await store.close();
    }
  });

  it("keeps the references with media: ref, for a caller that reads them when it sends", async () => {
    const store = await storedSessionWithImage(join(folder, "ref.db"));
    try {
      const engine = await createContextEngine({
        store,
        contextWindow: 64_000,
        tokenCounter: new FakeTokenCounter(),
      });
      const request = await engine.session("shots").prepare({ media: "ref" });
      const image = request.messages[0]!.content[1] as ImageBlock;
      expect(image.data).toBeUndefined();
      expect(image.ref).toMatch(/^blob:/);
      expect(() => request.toOpenAIChat()).toThrow(/must be loaded before converting/);
    } finally {
      await store.close();
    }
  });
});
