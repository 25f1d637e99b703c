// What a client can send that the server must answer with a clear 4xx, and what a server-side failure may tell it.
import { afterEach, describe, expect, it } from "vitest";
import { StoreError } from "../errors/errors.ts";
import { MemorySessionStore } from "../store/memory/index.ts";
import type { SessionRecord } from "../store/session-store.ts";
import { readSse } from "./test-support/read-sse.test-helpers.ts";
import {
  startHarness,
  type HarnessOptions,
  type ServerHarness,
} from "./test-support/server-harness.test-helpers.ts";

const harnesses: ServerHarness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((harness) => harness.close()));
});

async function setup(options: HarnessOptions = {}) {
  const harness = await startHarness(options);
  harnesses.push(harness);
  return harness;
}

/** A store whose session reads fail as a database's do, naming where it is. */
class FailingStore extends MemorySessionStore {
  retryable = false;
  override async getSession(sessionId: string): Promise<SessionRecord | undefined> {
    if (sessionId.includes("broken")) {
      throw new StoreError(
        "postgres://ctxkit@db.internal:5432/prod: disk full on /var/lib/pg",
        this.retryable,
      );
    }
    return super.getSession(sessionId);
  }
}

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

describe("hostile input and server-side failures", () => {
  it("answers a store failure without its details (database, host, path), which go to the server log", async () => {
    const store = new FailingStore();
    const harness = await setup({ store });
    const failed = await harness.call("/v1/sessions/broken");
    expect(failed.status).toBe(500);
    const body = await failed.text();
    expect(JSON.parse(body)).toMatchObject({ error: { code: "store_error" } });
    expect(body).not.toMatch(/db\.internal|var\/lib|prod/);
    expect(harness.logs.join("\n")).toMatch(
      /store_error: postgres:\/\/ctxkit@db\.internal:5432\/prod: disk full/,
    );

    store.retryable = true;
    const busy = await harness.call("/v1/sessions/broken");
    expect(busy.status).toBe(503);
    expect(await busy.text()).not.toContain("db.internal");
  });

  it("refuses session ids no tenant can have before reading the store or calling the upstream", async () => {
    const harness = await setup({ responses: () => "ok" });
    const header = await harness.call("/v1/chat/completions", {
      method: "POST",
      headers: { "x-ctxkit-session": "a%00b" },
      json: { model: "m", messages: [{ role: "user", content: "hi" }] },
    });
    expect(header.status).toBe(400);
    const long = await harness.call(`/v1/sessions/${"a".repeat(201)}/turns`, {
      method: "POST",
      json: { message: "hi" },
    });
    expect(long.status).toBe(400);
    expect(await long.text()).not.toContain("a".repeat(201));
    expect((await harness.call("/v1/sessions/%00")).status).toBe(404);
    expect((await harness.call("/v1/sessions", { method: "POST", json: { id: "tab\there" } })).status).toBe(
      400,
    );
    // URL clients resolve "." and ".." away: such a session could never be read or deleted.
    for (const id of [".", ".."]) {
      const dots = await harness.call("/v1/sessions", { method: "POST", json: { id } });
      expect(dots.status).toBe(400);
      expect(await dots.text()).toContain("not . or ..");
      const viaHeader = await harness.call("/v1/chat/completions", {
        method: "POST",
        headers: { "x-ctxkit-session": id },
        json: { model: "m", messages: [{ role: "user", content: "hi" }] },
      });
      expect(viaHeader.status).toBe(400);
    }
    expect(harness.upstream.requests).toHaveLength(0);
    expect((await harness.store.listSessions()).sessions).toEqual([]);
  });

  it("refuses a list limit that is not a whole number from 1 to 1000 written in digits", async () => {
    const harness = await setup({ responses: () => "ok" });
    for (const limit of ["5abc", "1.9", "1e3", "0", "1001", "-1", ""]) {
      for (const route of ["/v1/sessions", "/v1/memory"]) {
        const answer = await harness.call(`${route}?limit=${encodeURIComponent(limit)}`);
        expect(answer.status, `${route}?limit=${limit}`).toBe(400);
        expect(await answer.text()).toContain("limit must be a whole number from 1 to 1000");
      }
    }
    for (const route of ["/v1/sessions", "/v1/memory"])
      expect((await harness.call(`${route}?limit=1000`)).status).toBe(200);
  });

  it("answers JSON nested too deep to store or forward with a 400, not a 500 or a failed upstream", async () => {
    const harness = await setup({ responses: () => "ok" });
    const raw = (path: string, body: string) =>
      fetch(`${harness.server.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${harness.acme}`, "content-type": "application/json" },
        body,
      });
    const memory = await raw("/v1/memory", `{"kind":"fact","content":"x","metadata":{"a":${nested(5_000)}}}`);
    expect(memory.status).toBe(400);
    expect(await memory.text()).toMatch(/deeper than 1000 levels/);
    const stateless = await raw(
      "/v1/chat/completions",
      `{"model":"m","messages":[{"role":"user","content":"hi"}],"extra":${nested(20_000)}}`,
    );
    expect(stateless.status).toBe(400);
    expect(await stateless.text()).toMatch(/nests deeper than 1000 levels/);
    expect(harness.upstream.requests).toHaveLength(0);
  });

  it("takes only its own pricing names from the query, not an object's inherited keys", async () => {
    const harness = await setup({ responses: () => "ok" });
    await harness.call("/v1/sessions/p1/turns", { method: "POST", json: { message: "hi" } });
    for (const pricing of ["toString", "__proto__", "constructor"]) {
      expect((await harness.call(`/v1/sessions/p1/replay?pricing=${pricing}`)).status, pricing).toBe(400);
    }
  });

  it("ends a live event stream once its key is revoked", async () => {
    const harness = await setup({ responses: () => "ok" });
    const { key, record } = await harness.keys.create("acme");
    const stream = await harness.call("/v1/events", { key });
    expect(stream.status).toBe(200);
    const reading = readSse(stream, (event) => event.event === "committed");
    await harness.keys.revoke(record.id);
    // Past the stream's recheck interval, another key of the tenant commits a turn.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await harness.call("/v1/sessions/after-revoke/turns", { method: "POST", json: { message: "secret" } });
    expect(await reading).toEqual([]);
  });
});
