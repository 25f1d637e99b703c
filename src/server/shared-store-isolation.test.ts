// Two servers on one store, as several `ctxkit serve` processes share one PostgreSQL database: a session one
// tenant deletes through one server while the other still holds it in memory (a request in flight, the
// session's memo) must never hand anything of it to the tenant whose session takes its id next.
import { afterEach, describe, expect, it } from "vitest";
import { MemorySessionStore } from "../store/memory/index.ts";
import type { FakeOpenAIRequest } from "../test/fake-openai-server.ts";
import { startHarness, type ServerHarness } from "./test-support/server-harness.test-helpers.ts";

const user = (text: string) => ({ role: "user" as const, content: [{ type: "text" as const, text }] });
const reply = (text: string) => ({ role: "assistant" as const, content: [{ type: "text" as const, text }] });

/** Upstream answers that wait while a request holding `tag` is held. */
function heldUpstream() {
  let release: () => void = () => undefined;
  let arrived: () => void = () => undefined;
  const held = { tag: "", released: Promise.resolve(), arrived: Promise.resolve() };
  return {
    hold(tag: string) {
      held.tag = tag;
      held.released = new Promise<void>((resolve) => (release = resolve));
      held.arrived = new Promise<void>((resolve) => (arrived = resolve));
      return { arrived: held.arrived, release: () => release() };
    },
    responses: async (request: FakeOpenAIRequest) => {
      if (held.tag !== "" && JSON.stringify(request.body.messages).includes(held.tag)) {
        held.tag = "";
        arrived();
        await held.released;
      }
      return `reply ${request.index}`;
    },
  };
}

let servers: ServerHarness[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
});

/** Two servers on one store; tenant `local` owns the sessions without an owner (as `ctxkit serve`). */
async function twoServers(responses: ReturnType<typeof heldUpstream>["responses"]) {
  const store = new MemorySessionStore();
  const options = { store, responses, server: { unownedSessionsTenant: "local" } };
  const [a, b] = [await startHarness(options), await startHarness(options)];
  servers = [a, b];
  // acme's session stored under its plain id, as sessions stored before ids were scoped are: the one kind of id
  // that can be reused by another tenant (`local`, whose new sessions take plain ids).
  await store.appendTurn("abc", [user("acme's first question"), reply("acme's first answer")], {
    session: { owner: "acme" },
  });
  return {
    store,
    a,
    b,
    localB: (await b.keys.create("local")).key,
    localA: (await a.keys.create("local")).key,
  };
}

const chat = (server: ServerHarness, key: string, text: string, system?: string) =>
  server.call("/v1/chat/completions", {
    method: "POST",
    key,
    headers: { "x-ctxkit-session": "abc" },
    json: {
      model: "m",
      messages: [...(system === undefined ? [] : [{ role: "system", content: system }]), user(text)],
    },
  });

describe("servers sharing one store", () => {
  it("refuses a turn whose session was deleted and its id taken by another tenant meanwhile; the new session stays its owner's", async () => {
    const upstream = heldUpstream();
    const { store, a, b, localB } = await twoServers(upstream.responses);
    const held = upstream.hold("ACME-SECOND");
    const pending = chat(a, a.acme, "ACME-SECOND secret question");
    await held.arrived;

    expect((await b.call("/v1/sessions/abc", { method: "DELETE", key: b.acme })).status).toBe(204);
    expect((await chat(b, localB, "local's private question")).status).toBe(200);
    // local's new session took the plain id, at the seq acme's request expects to write at.
    expect(await store.getSession("abc")).toMatchObject({ owner: "local", nextSeq: 2 });

    held.release();
    const refused = await pending;
    expect(refused.status).toBe(409);
    expect(await refused.text()).toMatch(/no longer the session this writer loaded/);
    const messages = (await (await b.call("/v1/sessions/abc/messages", { key: localB })).json()) as {
      messages: { content: { text: string }[] }[];
    };
    expect(messages.messages.map((message) => message.content[0]!.text)).toEqual([
      "local's private question",
      expect.stringMatching(/^reply /),
    ]);
  });

  it("a delete or fork that waited behind a turn acts only if the session is still the tenant's", async () => {
    const upstream = heldUpstream();
    const { store, a, b, localB } = await twoServers(upstream.responses);
    const held = upstream.hold("ACME-SLOW");
    const pending = chat(a, a.acme, "ACME-SLOW question");
    await held.arrived;
    // Both wait for the turn on A to end.
    const deleting = a.call("/v1/sessions/abc", { method: "DELETE", key: a.acme });
    const forking = a.call("/v1/sessions/abc/fork", { method: "POST", key: a.acme, json: { id: "copy" } });
    // Time for both to pass their ownership check and queue for the session (nothing outside shows that).
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect((await b.call("/v1/sessions/abc", { method: "DELETE", key: b.acme })).status).toBe(204);
    expect((await chat(b, localB, "local's private question")).status).toBe(200);

    held.release();
    expect((await pending).status).toBe(409);
    expect((await deleting).status).toBe(404);
    expect((await forking).status).toBe(404);
    expect(await store.getSession("abc")).toMatchObject({ owner: "local", nextSeq: 2 });
    expect((await store.listSessions()).sessions.map((session) => session.id)).toEqual(["abc"]);
  });

  it("keeps nothing of a deleted session's memo for the tenant whose session takes its id", async () => {
    const upstream = heldUpstream();
    const { a, b, localA, localB } = await twoServers(upstream.responses);
    expect((await chat(a, a.acme, "ACME-SECRET question", "ACME-SECRET system prompt")).status).toBe(200);
    expect((await b.call("/v1/sessions/abc", { method: "DELETE", key: b.acme })).status).toBe(204);
    expect((await chat(b, localB, "local's question")).status).toBe(200);

    const context = await a.call("/v1/sessions/abc/context", { key: localA });
    expect(await context.text()).not.toContain("ACME-SECRET");
    expect((await chat(a, localA, "local asks again, with no system prompt")).status).toBe(200);
    const sent = JSON.stringify(a.upstream.requests.at(-1)!.body.messages);
    expect(sent).toContain("local's question");
    expect(sent).not.toContain("ACME-SECRET");
  });

  it("stores every tenant's new session under its own scoped id, so a deleted id is never another tenant's", async () => {
    const upstream = heldUpstream();
    const { store, a, b } = await twoServers(upstream.responses);
    expect((await b.call("/v1/sessions/abc", { method: "DELETE", key: b.acme })).status).toBe(204);
    const held = upstream.hold("ACME-AGAIN");
    const pending = chat(a, a.acme, "ACME-AGAIN");
    await held.arrived;
    expect((await chat(b, b.globex, "globex's question")).status).toBe(200);
    held.release();
    expect((await pending).status).toBe(200);
    expect(await store.getSession("abc")).toBeUndefined();
    expect((await store.loadMessages("globex/abc")).map((message) => message.role)).toEqual([
      "user",
      "assistant",
    ]);
    expect((await store.getSession("acme/abc"))?.owner).toBe("acme");
  });
});
