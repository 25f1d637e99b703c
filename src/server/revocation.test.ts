// A key revoked while its streams are open: every one of them ends within a second, idle or not — an event stream
// with nothing to send, a proxied model stream the upstream has stalled. (The bounds below are 10 s: far above the
// second it takes, far below the 15 s keep-alive tick an idle stream waited for before.)
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startHarness, type ServerHarness } from "./test-support/server-harness.test-helpers.ts";

const harnesses: ServerHarness[] = [];
const upstreams: Server[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((harness) => harness.close()));
  for (const server of upstreams.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

/** Reads a response body to its end; "ended" when it did within `boundMs`, else "still open". */
async function readToEnd(response: Response, boundMs = 10_000): Promise<{ outcome: string; text: string }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const bound = new Promise<"still open">((resolve) =>
    setTimeout(() => resolve("still open"), boundMs).unref(),
  );
  for (;;) {
    const next = await Promise.race([reader.read().catch(() => ({ done: true, value: undefined })), bound]);
    if (next === "still open") {
      await reader.cancel();
      return { outcome: next, text };
    }
    if (next.done) return { outcome: "ended", text };
    text += decoder.decode(next.value, { stream: true });
  }
}

/** An OpenAI-compatible upstream that starts a streamed answer, sends one chunk, then says nothing more. */
async function stallingUpstream(): Promise<string> {
  const server = createServer((request, response) => {
    request.resume();
    response.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = {
      id: "c1",
      object: "chat.completion.chunk",
      created: 1,
      model: "m",
      choices: [{ index: 0, delta: { role: "assistant", content: "Thinking" }, finish_reason: null }],
    };
    response.write(`data: ${JSON.stringify(chunk)}\n\n`);
  });
  upstreams.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

describe("revoking a key", () => {
  it("ends its idle /v1/events stream within a second", async () => {
    const harness = await startHarness({ responses: () => "ok" });
    harnesses.push(harness);
    const { key, record } = await harness.keys.create("acme");
    const stream = await harness.call("/v1/events", { key });
    expect(stream.status).toBe(200);
    await harness.keys.revoke(record.id);
    expect((await readToEnd(stream)).outcome).toBe("ended");
  });

  it("ends its proxied model stream that the upstream stalled, and stores nothing of it", async () => {
    const harness = await startHarness({
      server: { upstream: { baseURL: await stallingUpstream(), apiKey: "sk-up", model: "m" } },
    });
    harnesses.push(harness);
    const { key, record } = await harness.keys.create("acme");
    const answer = await harness.call("/v1/chat/completions", {
      key,
      method: "POST",
      headers: { "x-ctxkit-session": "stalled" },
      json: { model: "m", stream: true, messages: [{ role: "user", content: "hi" }] },
    });
    expect(answer.status).toBe(200);
    await harness.keys.revoke(record.id);
    const { outcome, text } = await readToEnd(answer);
    expect(outcome).toBe("ended");
    expect(text).toContain("Thinking");
    expect(text).not.toContain("[DONE]");
    expect(await harness.store.getSession("acme/stalled")).toBeUndefined();
  });
});
