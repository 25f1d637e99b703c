// A client that asks for a long streamed reply and never reads it: the server holds a bounded part of the reply for
// it (MAX_UNREAD_BYTES, see guard-streams.ts), then drops it — its connection closed, nothing of its turn stored,
// the session free for the next request — instead of buffering the whole reply.
import { request, type IncomingMessage } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { startHarness, type ServerHarness } from "./test-support/server-harness.test-helpers.ts";

const harnesses: ServerHarness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((harness) => harness.close()));
});

/** Far more than the unread bound and the loopback socket's buffers together. */
const REPLY_CHARACTERS = 24 * 1024 * 1024;

describe("a client that never reads its stream", () => {
  it("is dropped once it leaves too much unread: its turn fails, stores nothing, and frees the session", async () => {
    const harness = await startHarness({
      responses: (call) =>
        call.body.stream === true ? { text: "x".repeat(REPLY_CHARACTERS), chunkSize: 4_096 } : "short",
      server: { engine: { contextWindow: 64_000_000, maxOutputTokens: 2_000 } },
    });
    harnesses.push(harness);
    const url = new URL(`${harness.server.url}/v1/chat/completions`);
    const headers = {
      authorization: `Bearer ${harness.acme}`,
      "content-type": "application/json",
      "x-ctxkit-session": "slow",
    };
    const slow = await new Promise<IncomingMessage>((resolve, reject) => {
      const outgoing = request(url, { method: "POST", headers }, (response) => {
        response.pause(); // never read: the socket's buffers fill, then the server's
        resolve(response);
      });
      outgoing.once("error", reject);
      outgoing.end(
        JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: "long" }] }),
      );
    });
    expect(slow.statusCode).toBe(200);
    // The session's next request waits for the slow one to end: it is answered once the slow client was dropped.
    const next = await harness.call("/v1/chat/completions", {
      method: "POST",
      headers: { "x-ctxkit-session": "slow" },
      json: { model: "m", messages: [{ role: "user", content: "short one" }] },
    });
    expect(next.status).toBe(200);
    const stored = await harness.store.loadMessages("acme/slow");
    expect(stored.map((message) => message.role)).toEqual(["user", "assistant"]);
    // What reached the slow client ends without the end of the reply.
    let text = "";
    slow.setEncoding("utf8");
    slow.on("data", (chunk: string) => (text += chunk.slice(-64)));
    await new Promise<void>((resolve) => {
      slow.once("close", resolve);
      slow.once("error", () => resolve());
      slow.resume();
    });
    expect(text).not.toContain("[DONE]");
  });
});
