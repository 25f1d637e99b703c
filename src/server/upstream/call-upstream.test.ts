import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { HttpError } from "../http/http-error.ts";
import { callUpstream } from "./call-upstream.ts";
import { JsonText } from "./json-text.ts";

type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void;

const servers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((close) => close()));
});

/** A loopback upstream that answers every POST with `handler`, and remembers what it received. */
async function upstream(handler: Handler) {
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  const closed: boolean[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (body += chunk));
    request.on("end", () => {
      received.push({ headers: request.headers, body });
      const index = closed.push(false) - 1;
      response.on("close", () => (closed[index] = true));
      handler(request, response, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const { port } = server.address() as AddressInfo;
  return { baseURL: `http://127.0.0.1:${port}/v1`, received, closed };
}

const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

describe("callUpstream", () => {
  it("sends a body of pre-serialised pieces as the bytes JSON.stringify writes, with their length", async () => {
    const server = await upstream((_request, response) => response.end("{}"));
    const messages = Array.from({ length: 300 }, (_, index) => ({ role: "user", content: `é ${index} ✓` }));
    const body = {
      model: "m",
      messages: [{ role: "system", content: "s" }, ...messages.map((m) => new JsonText(JSON.stringify(m)))],
      stream: false,
    };
    await (await callUpstream({ baseURL: server.baseURL }, body, { timeoutMs: 5_000 })).text();
    const expected = JSON.stringify({ ...body, messages: [{ role: "system", content: "s" }, ...messages] });
    expect(server.received[0]!.body).toBe(expected);
    expect(server.received[0]!.headers["content-length"]).toBe(String(Buffer.byteLength(expected)));
  });

  it("POSTs the JSON body with the upstream's key, asks for an unencoded answer, and reads it whole", async () => {
    const server = await upstream((_request, response, body) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ echo: JSON.parse(body) as unknown }));
    });
    const call = await callUpstream(
      { baseURL: server.baseURL, apiKey: "sk-upstream", headers: { "x-org": "acme" } },
      { model: "m", note: "héllo ✓" },
      { timeoutMs: 5_000, headers: { "anthropic-version": "2023-06-01" } },
    );
    expect(call.status).toBe(200);
    expect(call.contentType).toBe("application/json");
    expect(JSON.parse(await call.text())).toEqual({ echo: { model: "m", note: "héllo ✓" } });
    expect(call.bodyMs()).toBeGreaterThanOrEqual(0);
    const { headers } = server.received[0]!;
    expect(headers).toMatchObject({
      authorization: "Bearer sk-upstream",
      "accept-encoding": "identity",
      "content-type": "application/json",
      "x-org": "acme",
      "anthropic-version": "2023-06-01",
    });
    expect(Number(headers["content-length"])).toBe(Buffer.byteLength(server.received[0]!.body));
  });

  it("refuses to follow a redirect and names where it points, without its query", async () => {
    const server = await upstream((_request, response) => {
      response.writeHead(307, { location: "https://models.example.com/v2/chat/completions?token=secret" });
      response.end();
    });
    const error = await failureOf(callUpstream({ baseURL: server.baseURL }, {}, { timeoutMs: 5_000 }));
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ status: 502, code: "upstream_error" });
    expect((error as Error).message).toContain("https://models.example.com/v2/chat/completions");
    expect((error as Error).message).not.toContain("secret");
  });

  it("answers 504 when the body stalls between chunks, and aborts the upstream request", async () => {
    const server = await upstream((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("data: {}\n\n");
    });
    const call = await callUpstream({ baseURL: server.baseURL }, {}, { timeoutMs: 200 });
    const chunks: string[] = [];
    const error = await failureOf(
      (async () => {
        for await (const chunk of call.chunks()) chunks.push(Buffer.from(chunk).toString());
      })(),
    );
    expect(chunks).toEqual(["data: {}\n\n"]);
    expect(error).toMatchObject({ status: 504, code: "upstream_timeout" });
    await expect.poll(() => server.closed[0]).toBe(true);
  });

  it("answers 502 for a body cut short, even when it was cut before anyone read it", async () => {
    const server = await upstream((_request, response) => {
      response.writeHead(200, { "content-type": "application/json", "content-length": "100" });
      response.write('{"partial": ');
      setTimeout(() => response.socket?.destroy(), 20);
    });
    const call = await callUpstream({ baseURL: server.baseURL }, {}, { timeoutMs: 5_000 });
    // The connection breaks while nobody reads: the process must not crash, and the read then fails.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await failureOf(call.text())).toMatchObject({ status: 502, code: "upstream_error" });
  });

  it("leaving the chunks early aborts the upstream request", async () => {
    const server = await upstream((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("data: 1\n\n");
    });
    const call = await callUpstream({ baseURL: server.baseURL }, {}, { timeoutMs: 5_000 });
    for await (const chunk of call.chunks()) {
      expect(Buffer.from(chunk).toString()).toBe("data: 1\n\n");
      break;
    }
    await expect.poll(() => server.closed[0]).toBe(true);
  });

  it("cancelling its web stream aborts the upstream request at once, even while a read waits", async () => {
    const server = await upstream((_request, response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("data: 1\n\n");
    });
    const call = await callUpstream({ baseURL: server.baseURL }, {}, { timeoutMs: 60_000 });
    const reader = call.stream().getReader();
    expect(Buffer.from((await reader.read()).value!).toString()).toBe("data: 1\n\n");
    const waiting = reader.read();
    await reader.cancel(new Error("client gone"));
    expect(await waiting).toEqual({ done: true, value: undefined });
    await expect.poll(() => server.closed[0]).toBe(true);
  });

  it("rejects with the client's reason when the client goes away before the answer", async () => {
    const server = await upstream(() => {
      // Never answers.
    });
    const client = new AbortController();
    const pending = failureOf(
      callUpstream({ baseURL: server.baseURL }, {}, { timeoutMs: 5_000, signal: client.signal }),
    );
    await expect.poll(() => server.received.length).toBe(1);
    const reason = new Error("client gone");
    client.abort(reason);
    expect(await pending).toBe(reason);
    await expect.poll(() => server.closed[0]).toBe(true);
  });
});
