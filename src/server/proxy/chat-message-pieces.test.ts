import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toOpenAIChat } from "../../formats/providers/openai-chat/index.ts";
import { historyArbitrary, openAIReasoning } from "../../formats/providers/test-support/history-arbitrary.ts";
import type { Message } from "../../model/message.ts";
import { MemoryBlobStore } from "../../store/memory/memory-blob-store.ts";
import { bodyChunks } from "../upstream/json-text.ts";
import { chatMessagePieces } from "./chat-message-pieces.ts";

const blobs = new MemoryBlobStore();

/** A stored message of the session `s1`. */
const stored = (id: string, role: Message["role"], content: Message["content"], seq = 0): Message => ({
  id,
  sessionId: "s1",
  seq,
  turn: 0,
  createdAt: "2026-01-01T00:00:00.000Z",
  role,
  content,
});

/** Messages that cut no segment: a marker, and a message of another provider's opaque blocks only (left out). */
function leftOut(message: Message, which: number): Message {
  if (which === 0) return { ...message, id: `${message.id}-marker`, kind: "marker" };
  return {
    ...message,
    id: `${message.id}-opaque`,
    role: "assistant",
    content: [{ type: "opaque", provider: "anthropic", data: { type: "compaction", content: "x" } }],
  };
}

/** A history with some messages that are left out of the chat form inserted (before tool messages too). */
const history = fc
  .tuple(
    historyArbitrary({ reasoning: openAIReasoning, stringToolInputs: true, refusals: true }),
    fc.array(fc.tuple(fc.nat(), fc.constantFrom(0, 1)), { maxLength: 3 }),
  )
  .map(([messages, insertions]) => {
    const result = [...messages];
    for (const [at, which] of insertions) {
      const position = at % (result.length + 1);
      result.splice(position, 0, leftOut(result[Math.min(position, result.length - 1)]!, which));
    }
    return result;
  });

const reasoning = fc.constantFrom("omit" as const, "tool-calls" as const, "include" as const);

/** What the proxy sent before the pieces: the whole view converted and serialised at once. */
const fresh = (messages: readonly Message[], mode: "omit" | "tool-calls" | "include") =>
  JSON.stringify({ model: "m", messages: toOpenAIChat(messages, { reasoning: mode }), stream: false });

const assembled = async (messages: readonly Message[], mode: "omit" | "tool-calls" | "include") =>
  Buffer.concat(
    bodyChunks({ model: "m", messages: await chatMessagePieces(messages, blobs, mode), stream: false }),
  ).toString();

describe("chatMessagePieces", () => {
  it("assembles, turn after turn from what it cached, the bytes of a fresh serialisation", async () => {
    await fc.assert(
      fc.asyncProperty(history, reasoning, fc.nat(), async (messages, mode, rewrite) => {
        // The view grows one message at a time, as between checkpoints; each call reuses the earlier ones.
        for (let length = 1; length <= messages.length; length++) {
          const view = messages.slice(0, length);
          expect(await assembled(view, mode)).toBe(fresh(view, mode));
        }
        // A checkpoint rewrites one message: a new object where the old one stood.
        const at = rewrite % messages.length;
        const rewritten = messages.map((message, index) =>
          index === at && message.role === "user"
            ? { ...message, content: [{ type: "text" as const, text: "rewritten" }] }
            : message,
        );
        expect(await assembled(rewritten, mode)).toBe(fresh(rewritten, mode));
      }),
      { numRuns: 60 },
    );
  });

  it("converts a message once while its segment stays the same", async () => {
    const messages: Message[] = [
      stored("u1", "user", [{ type: "text", text: "hi" }]),
      stored("a1", "assistant", [{ type: "text", text: "hello" }], 1),
    ];
    const first = await chatMessagePieces(messages, blobs, "tool-calls");
    const second = await chatMessagePieces(
      [...messages, stored("u2", "user", [{ type: "text", text: "more" }], 2)],
      blobs,
      "tool-calls",
    );
    expect(second.slice(0, 2)).toEqual(first);
    expect(second[0]).toBe(first[0]);
    expect(second[1]).toBe(first[1]);
    // Another reasoning mode is another wire form.
    expect((await chatMessagePieces(messages, blobs, "omit"))[0]).not.toBe(first[0]);
  });

  it("throws the whole conversion's error, naming the message by its place in the view", async () => {
    const messages: Message[] = [
      stored("u1", "user", [{ type: "text", text: "hi" }]),
      stored("a1", "assistant", [{ type: "text", text: "hello" }], 1),
      stored("u2", "user", [{ type: "image", mediaType: "image/png", ref: "blob:missing" }], 2),
    ];
    await expect(chatMessagePieces(messages, blobs, "tool-calls")).rejects.toThrow(/messages\[2\]/);
  });
});
