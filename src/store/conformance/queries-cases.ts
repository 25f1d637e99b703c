import { expect, it } from "vitest";
import { ValidationError } from "../../errors/errors.ts";
import type { SessionMetadata, SessionStore } from "../session-store.ts";
import { reply, user, type ConformanceContext } from "./conformance-fixtures.ts";

async function seedSessions(store: SessionStore, context: ConformanceContext): Promise<void> {
  const seeds: { id: string; owner: string; agent: string; metadata: SessionMetadata; prompt: string }[] = [
    {
      id: "a",
      owner: "ada",
      agent: "coder",
      metadata: { project: "x", pinned: true },
      prompt: "Deploy the web app",
    },
    { id: "b", owner: "bob", agent: "coder", metadata: { project: "y" }, prompt: "Fix the flaky test" },
    {
      id: "c",
      owner: "ada",
      agent: "writer",
      metadata: { project: "x", pinned: false },
      prompt: "Draft release notes",
    },
    {
      id: "d",
      owner: "ada",
      agent: "coder",
      metadata: { project: "y", count: 3 },
      prompt: "Refactor the parser",
    },
  ];
  for (const seed of seeds) {
    context.advance(60_000);
    const { prompt, id, ...init } = seed;
    await store.appendTurn(id, [user(prompt), reply(`Working on ${id}: see src/${id}/main.ts`)], {
      session: init,
    });
  }
}

/** List, search and resume-latest. */
export function queryCases(context: ConformanceContext): void {
  it("lists sessions newest first, in pages, filtered by owner, agent and metadata", async () => {
    const store = context.store();
    await seedSessions(store, context);
    const ids = (page: { sessions: readonly { id: string }[] }) => page.sessions.map((session) => session.id);
    expect(ids(await store.listSessions())).toEqual(["d", "c", "b", "a"]);
    const first = await store.listSessions({ limit: 3 });
    expect(ids(first)).toEqual(["d", "c", "b"]);
    expect(first.nextCursor).toBeDefined();
    const second = await store.listSessions({ limit: 3, cursor: first.nextCursor! });
    expect(ids(second)).toEqual(["a"]);
    expect(second.nextCursor).toBeUndefined();
    expect(ids(await store.listSessions({ owner: "ada" }))).toEqual(["d", "c", "a"]);
    expect(ids(await store.listSessions({ owner: "ada", agent: "coder" }))).toEqual(["d", "a"]);
    expect(ids(await store.listSessions({ metadata: { project: "x" } }))).toEqual(["c", "a"]);
    expect(ids(await store.listSessions({ metadata: { project: "x", pinned: true } }))).toEqual(["a"]);
    expect(ids(await store.listSessions({ metadata: { pinned: false } }))).toEqual(["c"]);
    expect(ids(await store.listSessions({ metadata: { count: 3 } }))).toEqual(["d"]);
    expect(ids(await store.listSessions({ metadata: { count: "3" } }))).toEqual([]);
    context.advance(60_000);
    await store.appendTurn("a", [user("one more")]);
    expect(ids(await store.listSessions({ limit: 2 }))).toEqual(["a", "d"]);
    await expect(store.listSessions({ cursor: "not-a-cursor" })).rejects.toBeInstanceOf(ValidationError);
    await expect(store.listSessions({ limit: 0 })).rejects.toBeInstanceOf(ValidationError);
  });

  it("with includeUnowned, lists, searches and finds the latest of the owner's and the unowned sessions", async () => {
    const store = context.store();
    for (const [id, owner] of [
      ["mine", "ada"],
      ["cli", undefined],
      ["theirs", "bob"],
    ] as const) {
      context.advance(60_000);
      await store.appendTurn(id, [user(`Deploy step ${id}`)], {
        session: owner === undefined ? {} : { owner },
      });
    }
    const ids = (sessions: readonly { id: string }[]) => sessions.map((session) => session.id);
    expect(ids((await store.listSessions({ owner: "ada" })).sessions)).toEqual(["mine"]);
    expect(ids((await store.listSessions({ owner: "ada", includeUnowned: true })).sessions)).toEqual([
      "cli",
      "mine",
    ]);
    expect(ids((await store.listSessions({ owner: "bob", includeUnowned: true })).sessions)).toEqual([
      "theirs",
      "cli",
    ]);
    const first = await store.listSessions({ owner: "ada", includeUnowned: true, limit: 1 });
    expect(ids(first.sessions)).toEqual(["cli"]);
    const rest = await store.listSessions({
      owner: "ada",
      includeUnowned: true,
      limit: 1,
      cursor: first.nextCursor!,
    });
    expect(ids(rest.sessions)).toEqual(["mine"]);
    const hits = await store.searchSessions("deploy", { owner: "ada", includeUnowned: true });
    expect(ids(hits.map((hit) => hit.session))).toEqual(["cli", "mine"]);
    expect((await store.latestSession({ owner: "ada", includeUnowned: true }))?.id).toBe("cli");
    expect((await store.latestSession({ owner: "ada" }))?.id).toBe("mine");
  });

  it("searches titles and message content by whole words", async () => {
    const store = context.store();
    await seedSessions(store, context);
    const found = await store.searchSessions("deploy");
    expect(found.map((hit) => hit.session.id)).toEqual(["a"]);
    expect(found[0]).toMatchObject({ seq: 0 });
    expect(found[0]!.snippet).toContain("Deploy");
    const byPath = await store.searchSessions("main.ts");
    expect(byPath.map((hit) => hit.session.id)).toEqual(["d", "c", "b", "a"]);
    expect(byPath.every((hit) => hit.seq === 1)).toBe(true);
    expect((await store.searchSessions("SRC B main")).map((hit) => hit.session.id)).toEqual(["b"]);
    expect(
      (await store.searchSessions("main", { owner: "ada", limit: 2 })).map((hit) => hit.session.id),
    ).toEqual(["d", "c"]);
    expect(await store.searchSessions("deplo")).toEqual([]);
    await store.renameSession("b", "Quarterly budget");
    const titleOnly = await store.searchSessions("quarterly");
    expect(titleOnly).toHaveLength(1);
    expect(titleOnly[0]).toMatchObject({ snippet: "Quarterly budget" });
    expect(titleOnly[0]!.seq).toBeUndefined();
    await expect(store.searchSessions("  ?! ")).rejects.toBeInstanceOf(ValidationError);
  });

  it("still finds content that a summary replaced", async () => {
    const store = context.store();
    await store.appendTurn("s1", [user("investigate the zeppelin crash"), reply("looking")]);
    await store.appendTurn("s1", [user("next"), reply("ok")]);
    await store.applyCompaction("s1", {
      fromSeq: 0,
      toSeq: 1,
      summary: { role: "user", content: [{ type: "text", text: "we looked at a crash" }] },
    });
    const hits = await store.searchSessions("zeppelin");
    expect(hits).toHaveLength(1);
    expect(hits[0]!.seq).toBe(0);
  });

  it("resumes the latest session matching a filter", async () => {
    const store = context.store();
    expect(await store.latestSession()).toBeUndefined();
    await seedSessions(store, context);
    expect((await store.latestSession())?.id).toBe("d");
    expect((await store.latestSession({ agent: "writer" }))?.id).toBe("c");
    expect((await store.latestSession({ owner: "bob" }))?.id).toBe("b");
    expect(await store.latestSession({ owner: "nobody" })).toBeUndefined();
  });
}
