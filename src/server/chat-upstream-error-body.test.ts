import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { readSse } from "./test-support/read-sse.test-helpers.ts";
import { startHarness, type ServerHarness } from "./test-support/server-harness.test-helpers.ts";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** An upstream on 127.0.0.1 that answers every request 200 with `body` (a string is sent as is). */
async function upstreamAnswering(contentType: string, body: string): Promise<string> {
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      response.writeHead(200, { "content-type": contentType });
      response.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function harnessOver(baseURL: string): Promise<ServerHarness> {
  const harness = await startHarness({ server: { upstream: { baseURL, model: "m" } } });
  closers.push(() => harness.close());
  return harness;
}

const post = (harness: ServerHarness, session: string, stream = false) =>
  harness.call("/v1/chat/completions", {
    method: "POST",
    headers: { "x-ctxkit-session": session },
    json: { model: "m", messages: [{ role: "user", content: "hi" }], ...(stream && { stream: true }) },
  });

describe("a 2xx upstream answer that carries an error (stateful chat completions)", () => {
  it("an error body on a 200 stores nothing and answers the upstream's message under its own status", async () => {
    const harness = await harnessOver(
      await upstreamAnswering(
        "application/json",
        JSON.stringify({ error: { message: "Provider returned error", code: 502 } }),
      ),
    );
    const response = await post(harness, "e200");
    expect(response.status).toBe(502);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("upstream_error");
    expect(error.message).toContain("Provider returned error");
    expect(await harness.store.getSession("acme/e200")).toBeUndefined();
  });

  it("an error without an HTTP status is a 502; a 4xx status is the upstream rejecting the request", async () => {
    const plain = await harnessOver(
      await upstreamAnswering("application/json", JSON.stringify({ error: { message: "no provider" } })),
    );
    const first = await post(plain, "e1");
    expect(first.status).toBe(502);
    expect(((await first.json()) as { error: { message: string } }).error.message).toContain("no provider");
    const rejecting = await harnessOver(
      await upstreamAnswering(
        "application/json",
        JSON.stringify({ error: { message: "bad tool schema", code: 400 } }),
      ),
    );
    const second = await post(rejecting, "e2");
    expect(second.status).toBe(400);
    expect(((await second.json()) as { error: { code: string } }).error.code).toBe("upstream_rejected");
    expect(await plain.store.getSession("acme/e1")).toBeUndefined();
    expect(await rejecting.store.getSession("acme/e2")).toBeUndefined();
  });

  it("a body without choices is no completion: 502, nothing stored", async () => {
    const harness = await harnessOver(
      await upstreamAnswering("application/json", JSON.stringify({ id: "x", object: "chat.completion" })),
    );
    const response = await post(harness, "nochoices");
    expect(response.status).toBe(502);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("upstream_error");
    expect(await harness.store.getSession("acme/nochoices")).toBeUndefined();
  });

  it("an error chunk inside a stream fails the turn: the client sees it, nothing is stored", async () => {
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const errorChunk = `data: ${JSON.stringify({
      id: "c",
      object: "chat.completion.chunk",
      error: { code: "server_error", message: "Provider disconnected" },
      choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }],
    })}\n\n`;
    const harness = await harnessOver(
      await upstreamAnswering(
        "text/event-stream",
        chunk({ role: "assistant", content: "Hel" }) + errorChunk + "data: [DONE]\n\n",
      ),
    );
    const response = await post(harness, "midstream", true);
    const events = await readSse(response);
    const last = events.at(-1)?.data as { error?: { message?: string } };
    expect(last.error?.message).toBe("Provider disconnected");
    expect(await harness.store.getSession("acme/midstream")).toBeUndefined();
  });

  it("a JSON error body answering a stream request is an error response, not an empty stream", async () => {
    const harness = await harnessOver(
      await upstreamAnswering(
        "application/json",
        JSON.stringify({ error: { message: "Rate limit exceeded upstream", code: 429 } }),
      ),
    );
    const response = await post(harness, "jsonstream", true);
    expect(response.status).toBe(429);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("rate_limited");
    expect(error.message).toContain("Rate limit exceeded upstream");
    expect(await harness.store.getSession("acme/jsonstream")).toBeUndefined();
  });
});
