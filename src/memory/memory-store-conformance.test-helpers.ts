/**
 * The conformance suite every `MemoryStore` passes: the in-process store, SQLite and PostgreSQL run the same
 * tests through `describeMemoryStoreConformance`.
 */
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CtxkitError } from "../errors/ctxkit-error.ts";
import { sequentialIds } from "../model/ids.ts";
import type { MemoryStore, MemoryStoreOptions } from "./memory-store.ts";

/** How a backend's test file plugs into the suite. */
export interface MemoryStoreHarness {
  /** A store over empty storage, with the given clock and ids. */
  create(options: MemoryStoreOptions): Promise<MemoryStore>;
}

const START = Date.parse("2025-03-01T10:00:00.000Z");

function errorCode(promise: Promise<unknown>): Promise<string | undefined> {
  return promise.then(
    () => undefined,
    (error: unknown) => (CtxkitError.isInstance(error) ? error.code : `untyped: ${String(error)}`),
  );
}

/**
 * Registers the memory store conformance tests for one backend.
 *
 * @example
 * describeMemoryStoreConformance("in-memory", { create: async (options) => new InMemoryMemoryStore(options) });
 */
export function describeMemoryStoreConformance(name: string, harness: MemoryStoreHarness): void {
  describe(`MemoryStore conformance: ${name}`, () => {
    let store: MemoryStore;
    let now = START;
    const advance = (milliseconds: number) => {
      now += milliseconds;
    };
    const at = (offset: number) => new Date(START + offset).toISOString();

    beforeEach(async () => {
      now = START;
      store = await harness.create({ clock: () => new Date(now), ids: sequentialIds() });
    });
    afterEach(async () => {
      await store.close();
    });

    it("adds a memory with its defaults and reads it back", async () => {
      const { memory, deduplicated } = await store.add({
        kind: "fact",
        content: "The API listens on port 8080",
      });
      expect(deduplicated).toBe(false);
      expect(memory).toEqual({
        id: "mem_1",
        owner: "local",
        kind: "fact",
        scope: "user",
        content: "The API listens on port 8080",
        createdAt: at(0),
        updatedAt: at(0),
        metadata: {},
      });
      expect(await store.get("mem_1")).toEqual(memory);
      expect(await store.get("mem_404")).toBeUndefined();
    });

    it("keeps every field, metadata included, through a round trip", async () => {
      const { memory } = await store.add({
        id: "m-custom",
        owner: "ada",
        kind: "session-summary",
        scope: "project",
        content: "Refactored the parser; tests pass.",
        sourceSessionId: "s1",
        expiresAt: "2025-03-08T12:00:00+02:00",
        metadata: { tags: ["parser"], turns: 4, nested: { ok: true, none: null } },
      });
      expect(memory.expiresAt).toBe("2025-03-08T10:00:00.000Z");
      expect(await store.get("m-custom", { owner: "ada" })).toEqual(memory);
    });

    it("refuses bad input with typed errors", async () => {
      expect(await errorCode(store.add({ kind: "fact", content: "  ...  " }))).toBe("invalid_input");
      expect(await errorCode(store.add({ kind: "rumour" as "fact", content: "x" }))).toBe("invalid_input");
      expect(await errorCode(store.add({ kind: "note", content: "x", expiresAt: "tomorrow" }))).toBe(
        "invalid_input",
      );
      expect(await errorCode(store.list({ limit: 0 }))).toBe("invalid_input");
      expect(await errorCode(store.search("?!"))).toBe("invalid_input");
      await store.add({ id: "fixed", kind: "note", content: "first note" });
      expect(await errorCode(store.add({ id: "fixed", kind: "note", content: "another one" }))).toBe(
        "invalid_input",
      );
      for (const input of [{ id: "nul\u0000" }, { owner: "a\u0000" }, { sourceSessionId: "s\u0000" }]) {
        expect(await errorCode(store.add({ ...input, kind: "note", content: "x" }))).toBe("invalid_input");
      }
    });

    it("keeps a U+0000 of the content as U+FFFD on every backend", async () => {
      const { memory: added } = await store.add({ kind: "fact", content: "binary\u0000output of the build" });
      expect(added.content).toBe("binary\uFFFDoutput of the build");
      expect((await store.get(added.id))?.content).toBe("binary\uFFFDoutput of the build");
      expect((await store.search("build")).map((hit) => hit.memory.id)).toEqual([added.id]);
    });

    it("updates fields, keeps createdAt and can remove the expiry", async () => {
      const { memory } = await store.add({ kind: "note", content: "draft", expiresAt: at(60_000) });
      advance(1_000);
      const updated = await store.update(memory.id, {
        content: "final text",
        kind: "fact",
        scope: "global",
        metadata: { reviewed: true },
        expiresAt: null,
      });
      expect(updated).toEqual({
        ...memory,
        content: "final text",
        kind: "fact",
        scope: "global",
        metadata: { reviewed: true },
        expiresAt: undefined,
        updatedAt: at(1_000),
      });
      expect(updated.expiresAt).toBeUndefined();
      expect(await store.get(memory.id)).toEqual(updated);
      expect(await errorCode(store.update("mem_404", { content: "x" }))).toBe("not_found");
      expect(await errorCode(store.update(memory.id, { content: "" }))).toBe("invalid_input");
    });

    it("deletes once", async () => {
      const { memory } = await store.add({ kind: "note", content: "temporary" });
      expect(await store.delete(memory.id)).toBe(true);
      expect(await store.delete(memory.id)).toBe(false);
      expect(await store.get(memory.id)).toBeUndefined();
    });

    it("lists newest first with scope, kind, session filters and a limit", async () => {
      await store.add({ kind: "fact", scope: "project", content: "fact one", sourceSessionId: "s1" });
      advance(10);
      await store.add({ kind: "preference", content: "preference two", sourceSessionId: "s2" });
      advance(10);
      await store.add({ kind: "session-summary", content: "summary three", sourceSessionId: "s1" });
      advance(10);
      await store.add({ kind: "note", scope: "global", content: "note four" });
      const contents = async (filter: Parameters<MemoryStore["list"]>[0]) =>
        (await store.list(filter)).map((memory) => memory.content);
      expect(await contents({})).toEqual(["note four", "summary three", "preference two", "fact one"]);
      expect(await contents({ limit: 2 })).toEqual(["note four", "summary three"]);
      expect(await contents({ scope: "project" })).toEqual(["fact one"]);
      expect(await contents({ scope: ["project", "global"] })).toEqual(["note four", "fact one"]);
      expect(await contents({ kinds: ["fact", "preference"] })).toEqual(["preference two", "fact one"]);
      expect(await contents({ sourceSessionId: "s1" })).toEqual(["summary three", "fact one"]);
      expect(await contents({ excludeSessionId: "s1" })).toEqual(["note four", "preference two"]);
    });

    describe("de-duplication", () => {
      it("merges text equal after normalisation into the existing memory", async () => {
        const first = await store.add({
          kind: "preference",
          content: "Prefers tabs, not spaces.",
          metadata: { a: 1, b: 1 },
          sourceSessionId: "s1",
        });
        advance(5_000);
        const version = await store.version();
        const second = await store.add({
          kind: "preference",
          content: "prefers TABS not spaces",
          metadata: { b: 2 },
          sourceSessionId: "s2",
        });
        expect(second.deduplicated).toBe(true);
        expect(second.memory).toEqual({
          ...first.memory,
          content: "prefers TABS not spaces",
          metadata: { a: 1, b: 2 },
          sourceSessionId: "s2",
          updatedAt: at(5_000),
        });
        expect(await store.list()).toEqual([second.memory]);
        expect(await store.version()).toBeGreaterThan(version);
      });

      it("merges a near-identical longer text (one word added at the end)", async () => {
        const base =
          "The deploy script builds the docker image, tags it with the commit hash, pushes it to the staging " +
          "registry, waits for the health check of the previous release, restarts the service behind the load " +
          "balancer and finally posts a short report to the team channel";
        const first = await store.add({ kind: "fact", content: base });
        const second = await store.add({ kind: "fact", content: `${base} afterwards.` });
        expect(second).toMatchObject({ deduplicated: true, memory: { id: first.memory.id } });
        expect((await store.list()).length).toBe(1);
      });

      it("keeps different memories apart: other kind, scope, owner, word order or session summary", async () => {
        await store.add({ kind: "fact", content: "prefers tabs over spaces" });
        const results = [
          await store.add({ kind: "preference", content: "prefers tabs over spaces" }),
          await store.add({ kind: "fact", scope: "project", content: "prefers tabs over spaces" }),
          await store.add({ kind: "fact", owner: "bob", content: "prefers tabs over spaces" }),
          await store.add({ kind: "fact", content: "prefers spaces over tabs" }),
          await store.add({
            kind: "session-summary",
            content: "worked on the parser",
            sourceSessionId: "s1",
          }),
          await store.add({
            kind: "session-summary",
            content: "worked on the parser",
            sourceSessionId: "s2",
          }),
        ];
        expect(results.map((result) => result.deduplicated)).toEqual([
          false,
          false,
          false,
          false,
          false,
          false,
        ]);
        const same = await store.add({
          kind: "session-summary",
          content: "Worked on the parser.",
          sourceSessionId: "s1",
        });
        expect(same).toMatchObject({ deduplicated: true, memory: { id: results[4]!.memory.id } });
        expect((await store.list()).length).toBe(6);
      });

      it("keeps the later expiry, or none when either has none", async () => {
        const first = await store.add({ kind: "note", content: "short lived note", expiresAt: at(1_000) });
        const later = await store.add({ kind: "note", content: "short lived note", expiresAt: at(9_000) });
        expect(later.memory).toMatchObject({ id: first.memory.id, expiresAt: at(9_000) });
        const earlier = await store.add({ kind: "note", content: "short lived note", expiresAt: at(2_000) });
        expect(earlier.memory.expiresAt).toBe(at(9_000));
        const permanent = await store.add({ kind: "note", content: "short lived note" });
        expect(permanent.memory.expiresAt).toBeUndefined();
        expect((await store.get(first.memory.id))?.expiresAt).toBeUndefined();
      });

      it("stores one memory per distinct normalised text, whatever the spelling (property)", async () => {
        const word = fc.constantFrom("alpha", "beta", "gamma", "delta");
        const spelling = fc.record({
          words: fc.array(word, { minLength: 1, maxLength: 3 }),
          upper: fc.boolean(),
          punctuation: fc.constantFrom("", ".", "!", " ;"),
        });
        let run = 0;
        await fc.assert(
          fc.asyncProperty(fc.array(spelling, { minLength: 1, maxLength: 6 }), async (entries) => {
            const owner = `property-${run++}`;
            for (const entry of entries) {
              const text = entry.words.join(" ") + entry.punctuation;
              await store.add({ owner, kind: "note", content: entry.upper ? text.toUpperCase() : text });
            }
            const distinct = new Set(entries.map((entry) => entry.words.join(" ")));
            expect((await store.list({ owner, limit: 1000 })).length).toBe(distinct.size);
          }),
          { numRuns: 25 },
        );
      });
    });

    describe("search", () => {
      beforeEach(async () => {
        await store.add({ kind: "fact", content: "The staging database listens on port 5433" });
        advance(10);
        await store.add({ kind: "fact", content: "Production database backups run nightly" });
        advance(10);
        await store.add({ kind: "note", content: "Portable builds need the staging flag" });
        advance(10);
        await store.add({
          kind: "preference",
          scope: "project",
          content: "Prefer small database migrations",
        });
      });

      it("ranks memories matching more query words first and leaves out the rest", async () => {
        const hits = await store.search("staging database port");
        expect(hits.map((hit) => hit.memory.content)[0]).toBe("The staging database listens on port 5433");
        expect(hits[0]!.matchedTerms).toBe(3);
        expect(hits.slice(1).every((hit) => hit.matchedTerms < 3)).toBe(true);
        expect(hits.map((hit) => hit.matchedTerms)).toEqual(
          [...hits.map((hit) => hit.matchedTerms)].sort((a, b) => b - a),
        );
        expect(hits.length).toBe(4);
      });

      it("matches whole words, case-insensitively, with a snippet", async () => {
        const hits = await store.search("PORT");
        expect(hits.map((hit) => hit.memory.content)).toEqual(["The staging database listens on port 5433"]);
        expect(hits[0]!.snippet.toLowerCase()).toContain("port");
        expect(await store.search("nonexistentword")).toEqual([]);
      });

      it("applies kind, scope, session filters and the limit", async () => {
        expect(
          (await store.search("database", { kinds: ["preference"] })).map((hit) => hit.memory.kind),
        ).toEqual(["preference"]);
        expect((await store.search("database", { scope: "user" })).length).toBe(2);
        expect((await store.search("database", { limit: 1 })).length).toBe(1);
        expect(await store.search("database", { owner: "someone-else" })).toEqual([]);
      });
    });

    describe("expiry", () => {
      it("hides expired memories from every read and purges them", async () => {
        const { memory } = await store.add({
          kind: "note",
          content: "meeting at noon",
          expiresAt: at(60_000),
        });
        await store.add({ kind: "note", content: "lasting note about noon" });
        expect((await store.search("noon")).length).toBe(2);
        advance(60_000);
        expect(await store.get(memory.id)).toBeUndefined();
        expect((await store.list()).map((item) => item.content)).toEqual(["lasting note about noon"]);
        expect((await store.search("noon")).length).toBe(1);
        expect(await errorCode(store.update(memory.id, { content: "x" }))).toBe("not_found");
        const version = await store.version();
        expect(await store.purgeExpired()).toBe(1);
        expect(await store.version()).toBeGreaterThan(version);
        expect(await store.purgeExpired()).toBe(0);
      });

      it("does not merge a new memory into an expired one", async () => {
        const first = await store.add({ kind: "note", content: "rotate the keys", expiresAt: at(1_000) });
        advance(2_000);
        const second = await store.add({ kind: "note", content: "rotate the keys" });
        expect(second.deduplicated).toBe(false);
        expect(second.memory.id).not.toBe(first.memory.id);
      });
    });

    describe("tenant isolation", () => {
      it("never lets one owner read, change or delete another's memories", async () => {
        const { memory } = await store.add({
          owner: "ada",
          kind: "fact",
          content: "secret project codename",
        });
        expect(await store.get(memory.id, { owner: "bob" })).toBeUndefined();
        expect(await store.get(memory.id)).toBeUndefined();
        expect(await store.list({ owner: "bob" })).toEqual([]);
        expect(await store.search("codename", { owner: "bob" })).toEqual([]);
        expect(await errorCode(store.update(memory.id, { content: "stolen" }, { owner: "bob" }))).toBe(
          "not_found",
        );
        expect(await store.delete(memory.id, { owner: "bob" })).toBe(false);
        expect(await store.get(memory.id, { owner: "ada" })).toEqual(memory);
        expect((await store.search("codename", { owner: "ada" })).length).toBe(1);
      });

      it("keeps one version counter per owner", async () => {
        const bobBefore = await store.version({ owner: "bob" });
        await store.add({ owner: "ada", kind: "fact", content: "ada fact" });
        expect(await store.version({ owner: "bob" })).toBe(bobBefore);
        expect(await store.version({ owner: "ada" })).toBeGreaterThan(0);
      });
    });

    it("bumps the version on every write and only then", async () => {
      const versions = [await store.version()];
      const { memory } = await store.add({ kind: "fact", content: "uses pnpm" });
      versions.push(await store.version());
      await store.get(memory.id);
      await store.list();
      await store.search("pnpm");
      versions.push(await store.version());
      await store.update(memory.id, { content: "uses pnpm 9" });
      versions.push(await store.version());
      await store.delete(memory.id);
      versions.push(await store.version());
      expect(versions[1]).toBeGreaterThan(versions[0]!);
      expect(versions[2]).toBe(versions[1]);
      expect(versions[3]).toBeGreaterThan(versions[2]!);
      expect(versions[4]).toBeGreaterThan(versions[3]!);
    });
  });
}
