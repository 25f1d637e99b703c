import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemorySessionStore } from "../store/memory/index.ts";
import { MemoryKeyStore } from "./auth/memory-key-store.ts";
import { createServer } from "./create-server.ts";
import { serverError } from "../test/fake-openai-responses.ts";
import { readSse } from "./test-support/read-sse.test-helpers.ts";
import { startHarness, type ServerHarness } from "./test-support/server-harness.test-helpers.ts";

/** A 1×1 PNG padded so the store moves it to the blob store (inline media over 1,024 characters). */
const IMAGE = `data:image/png;base64,${Buffer.alloc(2_000, 7).toString("base64")}`;

interface RouteCase {
  readonly method: string;
  /** `:id` is the session, `:memory` the memory id, `:ref` a blob of the session. */
  readonly path: string;
  readonly json?: unknown;
  readonly headers?: Record<string, string>;
  /** An unknown id creates a session here (so only another tenant's id is a 404). */
  readonly creates?: boolean;
}

/** Every route that names a session, a memory or a blob. */
const ROUTES: readonly RouteCase[] = [
  { method: "GET", path: "/v1/sessions/:id" },
  { method: "PATCH", path: "/v1/sessions/:id", json: { title: "stolen" } },
  { method: "DELETE", path: "/v1/sessions/:id" },
  { method: "POST", path: "/v1/sessions/:id/fork", json: {} },
  { method: "GET", path: "/v1/sessions/:id/export" },
  { method: "GET", path: "/v1/sessions/:id/messages" },
  { method: "GET", path: "/v1/sessions/:id/messages?strategy=all" },
  { method: "GET", path: "/v1/sessions/:id/blobs/:ref" },
  { method: "GET", path: "/v1/sessions/:id/stats" },
  { method: "GET", path: "/v1/sessions/:id/context" },
  { method: "GET", path: "/v1/sessions/:id/replay" },
  { method: "GET", path: "/v1/sessions/:id/timeline" },
  { method: "GET", path: "/v1/sessions/:id/timeline/:index" },
  { method: "GET", path: "/v1/sessions/:id/timeline/:index/offloaded/:ref" },
  { method: "POST", path: "/v1/sessions/:id/compact", json: {} },
  { method: "POST", path: "/v1/sessions/:id/clear", json: {} },
  { method: "POST", path: "/v1/sessions/:id/turns", json: { message: "leak it" }, creates: true },
  {
    method: "POST",
    path: "/v1/chat/completions",
    json: { model: "m", messages: [{ role: "user", content: "leak it" }] },
    headers: { "x-ctxkit-session": ":id" },
    creates: true,
  },
  { method: "GET", path: "/v1/memory/:memory" },
  { method: "DELETE", path: "/v1/memory/:memory" },
];

let harness: ServerHarness;
let sessionId: string;
let memoryId: string;
let blobRef: string;

beforeAll(async () => {
  harness = await startHarness({
    responses: (request) => {
      if (JSON.stringify(request.body.messages).includes("fail this")) return serverError();
      return request.index === 0 ? "acme's secret reply" : "a reply";
    },
  });
  sessionId = "acme-private";
  const answer = await harness.call("/v1/chat/completions", {
    method: "POST",
    headers: { "x-ctxkit-session": sessionId },
    json: {
      model: "m",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "acme's secret prompt" },
            { type: "image_url", image_url: { url: IMAGE } },
          ],
        },
      ],
    },
  });
  expect(answer.status).toBe(200);
  const created = await harness.call("/v1/memory", {
    method: "POST",
    json: { kind: "fact", content: "acme secret fact" },
  });
  memoryId = ((await created.json()) as { memory: { id: string } }).memory.id;
  const blobs = await harness.store.blobs.list(`acme/${sessionId}`);
  expect(blobs).toHaveLength(1);
  blobRef = blobs[0]!.ref;
});

afterAll(() => harness.close());

function fill(text: string, ids: { session: string; memory: string; ref: string }): string {
  return text.replaceAll(":id", ids.session).replaceAll(":memory", ids.memory).replaceAll(":ref", ids.ref);
}

async function send(
  route: RouteCase,
  key: string | null,
  ids: { session: string; memory: string; ref: string },
) {
  const headers = Object.fromEntries(
    Object.entries(route.headers ?? {}).map(([name, value]) => [name, fill(value, ids)]),
  );
  return harness.call(fill(route.path, ids), {
    method: route.method,
    key,
    headers,
    ...(route.json !== undefined && { json: route.json }),
  });
}

describe("tenant isolation", () => {
  it("the route table covers every route that takes an id", () => {
    const app = createServer({ store: new MemorySessionStore(), keys: new MemoryKeyStore(), webRoot: false });
    const withIds = app.routes
      .filter((route) => route.method !== "ALL" && route.path.includes(":"))
      .map((route) => `${route.method} ${route.path.replace("/v1/memory/:id", "/v1/memory/:memory")}`);
    expect(withIds.length).toBeGreaterThan(10);
    const covered = new Set(ROUTES.map((route) => `${route.method} ${route.path.split("?")[0]!}`));
    for (const route of withIds) expect(covered, route).toContain(route);
  });

  it("every route answers another tenant's id exactly as an unknown id: same status, same body, no data", async () => {
    const real = { session: sessionId, memory: memoryId, ref: blobRef };
    const unknown = { session: "no-such-session", memory: "mem_nosuch", ref: `blob:${"0".repeat(64)}` };
    for (const route of ROUTES.filter((candidate) => candidate.creates !== true)) {
      const foreign = await send(route, harness.globex, real);
      const label = `${route.method} ${route.path}`;
      expect(foreign.status, label).toBe(404);
      const foreignBody = await foreign.text();
      expect(foreignBody, label).not.toContain("secret");
      const missing = await send(route, harness.globex, unknown);
      expect(missing.status, label).toBe(404);
      const missingBody = await missing.text();
      expect(
        foreignBody.replaceAll(sessionId, "ID").replaceAll(memoryId, "ID").replaceAll(blobRef, "ID"),
        label,
      ).toBe(
        missingBody
          .replaceAll(unknown.session, "ID")
          .replaceAll(unknown.memory, "ID")
          .replaceAll(unknown.ref, "ID"),
      );
    }
    // Nothing happened to acme's data, and nothing reached the model on globex's behalf.
    const session = await harness.call(`/v1/sessions/${sessionId}`);
    expect(
      ((await session.json()) as { session: { title: string; messageCount: number } }).session,
    ).toMatchObject({
      messageCount: 2,
      title: "acme's secret prompt",
    });
    expect((await harness.call(`/v1/memory/${memoryId}`)).status).toBe(200);
    expect(harness.upstream.requests).toHaveLength(1);
  });

  it("the owner reaches the same routes (the 404s are not a broken route)", async () => {
    const own = await harness.call(`/v1/sessions/${sessionId}/blobs/${blobRef}`);
    expect(own.status).toBe(200);
    expect(own.headers.get("content-type")).toBe("image/png");
    for (const path of [
      "",
      "/messages",
      "/stats",
      "/context",
      "/replay",
      "/timeline",
      "/timeline/0",
      "/export",
    ]) {
      expect((await harness.call(`/v1/sessions/${sessionId}${path}`)).status, path).toBe(200);
    }
  });

  it("a blob of another session is not served through one's own session", async () => {
    const mine = await harness.call("/v1/chat/completions", {
      method: "POST",
      key: harness.globex,
      headers: { "x-ctxkit-session": "globex-own" },
      json: { model: "m", messages: [{ role: "user", content: "hello" }] },
    });
    expect(mine.status).toBe(200);
    const through = await harness.call(`/v1/sessions/globex-own/blobs/${blobRef}`, { key: harness.globex });
    expect(through.status).toBe(404);
  });

  it("a turn cannot name a stored blob: another tenant's media never reaches the caller's model", async () => {
    const before = harness.upstream.requests.length;
    for (const block of [
      { type: "image", mediaType: "image/png", ref: blobRef },
      { type: "file", mediaType: "application/pdf", ref: blobRef },
      { type: "image", mediaType: "image/png", ref: "blob:0000" },
    ]) {
      const turn = await harness.call("/v1/sessions/globex-peek/turns", {
        method: "POST",
        key: harness.globex,
        json: { message: [{ type: "text", text: "what is this?" }, block] },
      });
      expect(turn.status).toBe(400);
      // A known blob and an unknown one are refused alike: the answer says nothing of what is stored.
      expect(await turn.text()).toContain("blob references are the server's own");
    }
    expect(harness.upstream.requests.length).toBe(before);
    expect(await harness.store.getSession("globex/globex-peek")).toBeUndefined();
  });

  it("lists and searches show only the tenant's own sessions and memories", async () => {
    const list = (await (await harness.call("/v1/sessions", { key: harness.globex })).json()) as {
      sessions: { id: string }[];
    };
    expect(list.sessions.map((session) => session.id)).not.toContain(sessionId);
    expect(JSON.stringify(list)).not.toContain("secret");
    const search = await harness.call("/v1/sessions?q=secret", { key: harness.globex });
    expect(((await search.json()) as { sessions: unknown[] }).sessions).toEqual([]);
    const acmeSearch = await harness.call("/v1/sessions?q=secret");
    expect(((await acmeSearch.json()) as { sessions: { id: string }[] }).sessions.map((s) => s.id)).toContain(
      sessionId,
    );
    const memories = await harness.call("/v1/memory?q=secret", { key: harness.globex });
    expect(((await memories.json()) as { hits: unknown[] }).hits).toEqual([]);
    const own = (await (await harness.call("/v1/sessions")).json()) as {
      sessions: Record<string, unknown>[];
    };
    expect(own.sessions.find((session) => session["id"] === sessionId)).not.toHaveProperty("owner");
  });
});

describe("session ids are per tenant", () => {
  const creating = ROUTES.filter((route) => route.creates === true);

  /** A session's messages as `key`'s tenant sees them, as [role, text] pairs. */
  async function conversation(id: string, key: string) {
    const answer = await harness.call(`/v1/sessions/${id}/messages`, { key });
    expect(answer.status).toBe(200);
    const { messages } = (await answer.json()) as {
      messages: { role: string; sessionId: string; content: { text?: string }[] }[];
    };
    for (const message of messages) expect(message.sessionId).toBe(id);
    return messages.map((message) => [message.role, message.content.map((block) => block.text).join("")]);
  }

  it("writing to another tenant's id makes the writer's own session, answered exactly like a new id", async () => {
    for (const [index, route] of creating.entries()) {
      const label = `${route.method} ${route.path}`;
      const foreign = await send(route, harness.globex, { session: sessionId, memory: "", ref: "" });
      const fresh = await send(route, harness.globex, {
        session: `globex-new-${index}`,
        memory: "",
        ref: "",
      });
      expect(foreign.status, label).toBe(fresh.status);
      expect(foreign.status, label).toBe(200);
      const [foreignBody, freshBody] = [await foreign.text(), await fresh.text()];
      expect(foreignBody, label).not.toContain("secret");
      // The same answer but for the session id and what differs by nature (message ids, times, durations).
      const shape = (text: string, id: string) =>
        text
          .replaceAll(id, "ID")
          .replace(/"(id|chatcmpl[^"]*)":"[^"]*"/g, '"$1":"…"')
          .replace(/"[^"]*"|\d+/g, (token) =>
            /^\d+$/.test(token) || /\d{4}-\d\d-\d\dT/.test(token) ? "N" : token,
          );
      expect(shape(foreignBody, sessionId), label).toBe(shape(freshBody, `globex-new-${index}`));
    }
    // globex's "acme-private" holds globex's turns only; acme's is untouched; the model never saw acme's words.
    const globexTurns = await conversation(sessionId, harness.globex);
    expect(globexTurns.map(([role]) => role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(JSON.stringify(globexTurns)).not.toContain("secret");
    expect(await conversation(sessionId, harness.acme)).toEqual([
      ["user", "acme's secret prompt"],
      ["assistant", "acme's secret reply"],
    ]);
    for (const request of harness.upstream.requests.slice(1)) {
      expect(JSON.stringify(request.body.messages)).not.toContain("secret");
    }
    // Every route shows globex its session by the id it chose, never by how it is stored.
    for (const path of [
      "",
      "/messages",
      "/messages?strategy=all",
      "/stats",
      "/context",
      "/replay",
      "/timeline",
      "/timeline/0",
      "/export",
    ]) {
      const answer = await harness.call(`/v1/sessions/${sessionId}${path}`, { key: harness.globex });
      expect(answer.status, path).toBe(200);
      const text = await answer.text();
      expect(text, path).not.toContain("globex/");
      expect(text, path).not.toContain("secret");
    }
    for (const [method, path, json] of [
      ["PATCH", "", { title: "globex's title" }],
      ["POST", "/compact", {}],
      ["POST", "/clear", {}],
    ] as const) {
      const answer = await harness.call(`/v1/sessions/${sessionId}${path}`, {
        method,
        key: harness.globex,
        json,
      });
      expect(answer.status, `${method} ${path}`).toBe(200);
      expect(await answer.text(), path).not.toContain("globex/");
    }
    const acmeSession = await harness.call(`/v1/sessions/${sessionId}`);
    expect(((await acmeSession.json()) as { session: { title: string } }).session.title).toBe(
      "acme's secret prompt",
    );
    // A fork into an id acme uses is globex's own, and names its parent by globex's id.
    const fork = await harness.call(`/v1/sessions/${sessionId}/fork`, {
      method: "POST",
      key: harness.globex,
      json: { id: sessionId.replace("private", "fork") },
    });
    await harness.call("/v1/sessions", { method: "POST", json: { id: "acme-fork-target" } });
    const intoTaken = await harness.call(`/v1/sessions/${sessionId}/fork`, {
      method: "POST",
      key: harness.globex,
      json: { id: "acme-fork-target" },
    });
    expect(fork.status).toBe(201);
    expect(intoTaken.status).toBe(201);
    expect(((await fork.json()) as { session: Record<string, unknown> }).session).toMatchObject({
      id: "acme-fork",
      parentId: sessionId,
    });
    expect(((await intoTaken.json()) as { session: { id: string } }).session.id).toBe("acme-fork-target");
    expect(
      (
        await harness.call(`/v1/sessions/${sessionId}/fork`, {
          method: "POST",
          key: harness.globex,
          json: { id: "acme-fork-target" },
        })
      ).status,
    ).toBe(409); // globex's own id now
    const list = (await (await harness.call("/v1/sessions", { key: harness.globex })).json()) as {
      sessions: { id: string; title?: string }[];
    };
    expect(list.sessions.map((session) => session.id)).toContain(sessionId);
    expect(JSON.stringify(list)).not.toContain("secret");
    expect(JSON.stringify(list)).not.toContain("globex/");
  });

  it("no tenant can take or block another's future ids, on any route that creates one", async () => {
    for (const route of [{ method: "POST", path: "/v1/sessions", json: { id: ":id" } }, ...creating]) {
      const id = `future-${route.path.replaceAll(/\W/g, "")}`;
      const json = route.json !== undefined && "id" in (route.json as object) ? { id } : route.json;
      const taken = await send({ ...route, json }, harness.globex, { session: id, memory: "", ref: "" });
      expect(taken.status, route.path).toBeLessThan(300);
      // acme creates the same id, uses it, and sees only its own turn.
      const created = await harness.call("/v1/sessions", { method: "POST", json: { id } });
      expect(created.status, route.path).toBe(201);
      const used = await harness.call("/v1/chat/completions", {
        method: "POST",
        headers: { "x-ctxkit-session": id },
        json: { model: "m", messages: [{ role: "user", content: "acme's turn" }] },
      });
      expect(used.status, route.path).toBe(200);
      expect(await conversation(id, harness.acme)).toEqual([
        ["user", "acme's turn"],
        ["assistant", "a reply"],
      ]);
      // Deleting one tenant's session leaves the other's.
      expect(
        (await harness.call(`/v1/sessions/${id}`, { method: "DELETE", key: harness.globex })).status,
      ).toBe(204);
      expect((await harness.call(`/v1/sessions/${id}`)).status, route.path).toBe(200);
      expect((await harness.call(`/v1/sessions/${id}`, { key: harness.globex })).status).toBe(404);
    }
  });

  it("live events name a tenant's session by its own id, whatever the store id", async () => {
    const controller = new AbortController();
    const events = await harness.call("/v1/events", { key: harness.globex, signal: controller.signal });
    const reading = readSse(events, (event) => event.event === "deleted");
    const id = "acme-private-events";
    await harness.call("/v1/sessions", { method: "POST", json: { id } }); // acme holds the plain id
    const answer = await harness.call("/v1/chat/completions", {
      method: "POST",
      key: harness.globex,
      headers: { "x-ctxkit-session": id },
      json: { model: "m", messages: [{ role: "user", content: "globex speaks" }] },
    });
    expect(answer.status).toBe(200);
    await harness.call(`/v1/sessions/${id}`, { method: "DELETE", key: harness.globex });
    const received = await reading;
    controller.abort();
    expect(received.map((event) => event.event).filter((name) => name !== "governance")).toEqual([
      "committed",
      "deleted",
    ]);
    for (const event of received) expect(event.data).toMatchObject({ sessionId: id });
  });

  it("a request that fails reserves nothing", async () => {
    const failing = [
      {
        method: "POST",
        path: "/v1/sessions/:id/turns",
        json: { message: "fail this" },
      },
      {
        method: "POST",
        path: "/v1/chat/completions",
        json: { model: "m", messages: [{ role: "user", content: "fail this" }] },
        headers: { "x-ctxkit-session": ":id" },
      },
      {
        method: "POST",
        path: "/v1/responses",
        json: { model: "m", input: "fail this" },
        headers: { "x-ctxkit-session": ":id" },
      },
      {
        method: "POST",
        path: "/v1/messages",
        json: { model: "m", max_tokens: 5, messages: [{ role: "user", content: "fail this" }] },
        headers: { "x-ctxkit-session": ":id" },
      },
    ];
    for (const [index, route] of failing.entries()) {
      const id = `ghost-${index}`;
      const answer = await send(route, harness.globex, { session: id, memory: "", ref: "" });
      await answer.text();
      expect((await harness.call(`/v1/sessions/${id}`, { key: harness.globex })).status, route.path).toBe(
        404,
      );
      const list = await (await harness.call("/v1/sessions", { key: harness.globex })).text();
      expect(list).not.toContain(id);
    }
  });
});

describe("authentication", () => {
  const paths: readonly RouteCase[] = [
    ...ROUTES,
    { method: "GET", path: "/v1/sessions" },
    { method: "POST", path: "/v1/sessions", json: {} },
    { method: "GET", path: "/v1/memory" },
    { method: "POST", path: "/v1/memory", json: { kind: "fact", content: "x" } },
    { method: "GET", path: "/v1/me" },
    { method: "GET", path: "/v1/events" },
    { method: "GET", path: "/metrics" },
    { method: "POST", path: "/v1/responses", json: { model: "m", input: "x" } },
    { method: "POST", path: "/v1/messages", json: { model: "m", max_tokens: 5, messages: [] } },
    { method: "POST", path: "/v1/messages/count_tokens", json: { model: "m", messages: [] } },
  ];

  it("the 401 table covers every route of the app but the probes (/health, /ready)", () => {
    const app = createServer({ store: new MemorySessionStore(), keys: new MemoryKeyStore(), webRoot: false });
    const all = app.routes
      .filter((route) => route.method !== "ALL" && route.path !== "/health" && route.path !== "/ready")
      .map((route) => `${route.method} ${route.path.replace("/v1/memory/:id", "/v1/memory/:memory")}`);
    const covered = new Set(paths.map((route) => `${route.method} ${route.path.split("?")[0]!}`));
    for (const route of all) expect(covered, route).toContain(route);
  });

  it.each([
    ["no key", null],
    ["a malformed key", "not-a-key"],
    ["an unknown key", `ctxk_0123456789ab_${"A".repeat(43)}`],
  ])("%s gets 401 with WWW-Authenticate on every route", async (_label, key) => {
    const ids = { session: sessionId, memory: memoryId, ref: blobRef };
    for (const route of paths) {
      const answer = await send(route, key, ids);
      expect(answer.status, `${route.method} ${route.path}`).toBe(401);
      expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    }
  });

  it("/metrics counts every tenant's traffic: tenants' keys get 403 naming the permission, the operator's key reads it", async () => {
    for (const key of [harness.acme, harness.globex]) {
      const refused = await harness.call("/metrics", { key });
      expect(refused.status).toBe(403);
      expect(refused.headers.get("content-type")).toMatch(/^application\/json/);
      const { error } = (await refused.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe("forbidden");
      expect(error.message).toContain('needs the "metrics" permission');
      expect(error.message).toContain("ctxkit serve keys add <name> --metrics");
    }
    const answer = await harness.call("/metrics", { key: harness.operator });
    expect(answer.status).toBe(200);
    const text = await answer.text();
    expect(text).toMatch(
      /^ctxkit_http_requests_total\{method="POST",route="\/v1\/chat\/completions",status="200"\} \d/m,
    );
    expect(text).toContain('ctxkit_http_requests_total{method="GET",route="/metrics",status="403"}');
    for (const tenantData of ["acme", "globex", "monitoring", sessionId, "ctxk_"]) {
      expect(text).not.toContain(tenantData);
    }
    const { key: operator, record } = await harness.keys.create("monitoring", undefined, undefined, [
      "metrics",
    ]);
    expect((await harness.call("/metrics", { key: operator })).status).toBe(200);
    await harness.keys.revoke(record.id);
    expect((await harness.call("/metrics", { key: operator })).status).toBe(401);
  });

  it("a revoked key stops working", async () => {
    const { key, record } = await harness.keys.create("acme");
    expect((await harness.call("/v1/me", { key })).status).toBe(200);
    await harness.keys.revoke(record.id);
    expect((await harness.call("/v1/me", { key })).status).toBe(401);
  });

  it("/health needs no key and says auth is on; /ready needs no key and says no more than ready", async () => {
    const answer = await harness.call("/health", { key: null });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ status: "ok", auth: true });
    const ready = await harness.call("/ready", { key: null });
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ready" });
  });

  it("no key, Authorization header or upstream key ever reaches the log", async () => {
    await harness.call("/v1/me", { key: "ctxk_0123456789ab_leakedleakedleakedleakedleakedleakedleake" });
    const log = harness.logs.join("\n");
    expect(log.length).toBeGreaterThan(0);
    for (const secret of [
      harness.acme,
      harness.globex,
      "leakedleaked",
      "sk-upstream-secret",
      "Bearer",
      sessionId,
    ]) {
      expect(log).not.toContain(secret);
    }
  });
});

describe("body limit", () => {
  it("every route that takes a body answers 413 over the limit, before auth, and nothing is stored", async () => {
    const small = await startHarness({
      responses: ["never sent"],
      server: { limits: { maxBodyBytes: 1_024 } },
    });
    try {
      const app = createServer({
        store: new MemorySessionStore(),
        keys: new MemoryKeyStore(),
        webRoot: false,
      });
      const writes = app.routes.filter((route) => route.method === "POST" || route.method === "PATCH");
      expect(writes.length).toBeGreaterThan(5);
      const oversized = { message: "x".repeat(2_000), model: "m", messages: [], kind: "fact", content: "y" };
      for (const route of writes) {
        const path = route.path.replaceAll(":id", "big");
        for (const key of [small.acme, null]) {
          const answer = await small.call(path, {
            method: route.method,
            key,
            headers: { "x-ctxkit-session": "big" },
            json: oversized,
          });
          expect(answer.status, `${route.method} ${route.path}`).toBe(413);
          expect(((await answer.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
        }
      }
      expect(small.upstream.requests).toHaveLength(0);
      expect((await small.store.listSessions()).sessions).toHaveLength(0);
      expect(await small.memory.list({ owner: "acme" })).toHaveLength(0);
    } finally {
      await small.close();
    }
  });
});
