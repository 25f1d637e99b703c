// Session ids outside Latin-1 in X-Ctxkit-Session: sent percent-encoded (HTTP header values are Latin-1), stored
// under the decoded id, echoed encoded; a malformed encoding is a 400 and stores nothing.
import net from "node:net";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionHeaderValue, sessionIdFromHeader } from "../../src/server/http/session-header.ts";
import {
  startHarness,
  type ServerHarness,
} from "../../src/server/test-support/server-harness.test-helpers.ts";

let harness: ServerHarness;
beforeAll(async () => {
  harness = await startHarness({ responses: () => "noted" });
});
afterAll(() => harness.close());

const client = (session: string) =>
  new OpenAI({
    baseURL: `${harness.server.url}/v1`,
    apiKey: harness.acme,
    maxRetries: 0,
    defaultHeaders: { "X-Ctxkit-Session": session },
  });

describe("X-Ctxkit-Session outside Latin-1", () => {
  it("is accepted percent-encoded through the official client, stored under the decoded id and echoed encoded", async () => {
    const id = "会话-1 🚀".replace(" ", "_");
    const response = await client(encodeURIComponent(id))
      .chat.completions.create({ model: "m", messages: [{ role: "user", content: "hello" }] })
      .withResponse();
    expect(response.response.headers.get("x-ctxkit-session")).toBe(encodeURIComponent(id));
    expect((await harness.store.getSession(`acme/${id}`))?.messageCount).toBe(2);
    const read = await harness.call(`/v1/sessions/${encodeURIComponent(id)}`);
    expect(read.status).toBe(200);
  });

  it("refuses a malformed encoding with a 400 and stores nothing", async () => {
    const error = await client("broken%E4%BC")
      .chat.completions.create({ model: "m", messages: [{ role: "user", content: "hello" }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toMatch(/percent-encoding/);
    const stored = (await harness.store.listSessions()).sessions.map((session) => session.id);
    expect(stored.filter((id) => id.includes("broken"))).toEqual([]);
  });

  it("refuses raw UTF-8 bytes (curl -H 'X-Ctxkit-Session: café-1') with a 400 naming the encoded id, and stores nothing", async () => {
    const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hello" }] });
    const { port, hostname } = new URL(harness.server.url);
    const head = [
      "POST /v1/chat/completions HTTP/1.1",
      "Host: 127.0.0.1",
      `Authorization: Bearer ${harness.acme}`,
      "Content-Type: application/json",
      `Content-Length: ${Buffer.byteLength(body)}`,
      "Connection: close",
      "X-Ctxkit-Session: café-1",
    ].join("\r\n");
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(port), hostname, () => {
        // The header's bytes as UTF-8, as curl sends what the terminal typed.
        socket.end(Buffer.from(`${head}\r\n\r\n${body}`, "utf8"));
      });
      let received = "";
      socket.on("data", (chunk: Buffer) => (received += chunk.toString("utf8")));
      socket.on("close", () => resolve(received));
      socket.on("error", reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain("X-Ctxkit-Session: caf%C3%A9-1");
    const stored = (await harness.store.listSessions()).sessions.map((session) => session.id);
    expect(stored.filter((id) => id.startsWith("acme/caf"))).toEqual([]);
  });

  it("takes a raw Latin-1 id whose bytes are not UTF-8 as it is, and refuses what reads as UTF-8", () => {
    expect(sessionIdFromHeader("\u00fcn\u00efcode")).toBe("ünïcode");
    expect(() => sessionIdFromHeader("caf\u00c3\u00a9-1")).toThrow(/percent-encode.*caf%C3%A9-1/);
  });

  it("round-trips every id the header can name (encode, then decode)", () => {
    for (const id of ["plain-id", "a:b@c", "100%", "会话", "ünïcode", "emoji🚀"]) {
      expect(sessionIdFromHeader(sessionHeaderValue(id))).toBe(id);
    }
    expect(sessionHeaderValue("plain-id")).toBe("plain-id");
  });
});
