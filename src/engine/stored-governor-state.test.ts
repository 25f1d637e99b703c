import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { GovernorState } from "../governance/governor-state.ts";
import { MemoryBlobStore } from "../store/memory/memory-blob-store.ts";
import type { JsonValue, Message } from "../model/message.ts";
import { sequentialIds } from "../model/ids.ts";
import { toOpenAIChat } from "../formats/providers/openai-chat/index.ts";
import { openSqliteSessionStore } from "../store/sqlite/index.ts";
import type { SessionStore } from "../store/session-store.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import type { CallModel } from "./agent-run.ts";
import type { ContextStats } from "../assembly/context-stats.ts";
import { createContextEngine } from "./context-engine.ts";
import { GovernorStateCodec, VIEW_MESSAGES_MEDIA_TYPE } from "./stored-governor-state.ts";

const folder = mkdtempSync(join(tmpdir(), "ctxkit-governor-state-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
const clock = () => new Date("2026-03-01T12:00:00Z");

function engineOver(store: SessionStore) {
  return createContextEngine({
    store,
    contextWindow: 24_000,
    maxOutputTokens: 2_000,
    tokenCounter: new FakeTokenCounter(),
    summarizer: new FakeSummarizer(),
    ids: sequentialIds(),
    clock,
  });
}

/** A model that reads three files a turn (each a long listing), then answers. */
const reader: CallModel = async (request) => {
  const since = request.messages.slice(
    request.messages.findLastIndex((message) => message.role === "user" && message.kind === undefined),
  );
  const reads = since.filter((message) => message.role === "tool").length;
  const usage = { input: request.tokens.total, output: 5 };
  if (reads >= 3) return { content: `read ${reads} files`, usage };
  const id = `c${request.messages.length}`;
  return { content: [{ type: "tool-call", id, name: "read_file", input: { path: `f${id}.ts` } }], usage };
};
const executeTool = async (call: { id: string }) => ({
  content: Array.from({ length: 120 }, (_, line) => `${call.id} line ${line}: ${"z".repeat(40)}`).join("\n"),
});

const countAll = (messages: readonly Message[]) =>
  messages.reduce((sum, message) => sum + new FakeTokenCounter().countMessage(message), 0);

/** What stats say of the governed view itself (its size and make-up, not the fixed tokens of the last request). */
const viewOf = ({ messages, roles, characters }: ContextStats) => ({ messages, roles, characters });

async function storedState(store: SessionStore, sessionId: string) {
  return (await store.loadGovernorState(sessionId)) as { version: number; view: Record<string, unknown>[] };
}

describe("the governor state a session stores", () => {
  it("keeps rewritten messages once as blobs and history messages as runs, so a turn writes little however long the session", async () => {
    const store = await openSqliteSessionStore({ path: join(folder, "size.db") });
    try {
      const session = (await engineOver(store)).session("long");
      const sizes: number[] = [];
      for (let turn = 0; turn < 12; turn++) {
        await session.run(`turn ${turn}`, reader, { executeTool });
        sizes.push(JSON.stringify(await store.loadGovernorState("long")).length);
      }
      const state = await storedState(store, "long");
      expect(state.version).toBe(2);
      const places = state.view
        .filter((entry) => "ref" in entry)
        .map((entry) => `${String(entry["ref"])}#${String(entry["at"])}`);
      expect(places.length).toBeGreaterThan(5); // offloaded outputs: governance rewrote them
      expect(new Set(places).size).toBe(places.length);
      expect(state.view.some((entry) => "message" in entry)).toBe(false);
      const runs = state.view.filter((entry) => typeof entry["count"] === "number");
      expect(runs.length).toBeGreaterThan(0);
      // The rewritten messages new in a turn are one blob of the session: at most one per turn, each message once.
      const blobs = (await store.blobs.list("long")).filter(
        (blob) => blob.mediaType === VIEW_MESSAGES_MEDIA_TYPE,
      );
      expect(blobs.length).toBeGreaterThan(1);
      expect(blobs.length).toBeLessThanOrEqual(12);
      const stored = await Promise.all(
        blobs.map(async (blob) => JSON.parse((await store.blobs.getText(blob.ref))!) as Message[]),
      );
      const ids = stored.flat().map((message) => JSON.stringify(message));
      expect(new Set(ids).size).toBe(ids.length);
      // What a turn writes: ~100 bytes per rewritten message or run, not the messages themselves.
      expect(sizes.at(-1)!).toBeLessThan(1_000 + 120 * state.view.length);
      const history = await session.history();
      const whole = history.reduce((sum: number, message) => sum + JSON.stringify(message).length, 0);
      expect(sizes.at(-1)!).toBeLessThan(whole / 20);
    } finally {
      await store.close();
    }
  });

  it("restored after a restart, governs the next request exactly as the engine that never stopped", async () => {
    const path = join(folder, "restart.db");
    const store = await openSqliteSessionStore({ path });
    try {
      const running = (await engineOver(store)).session("s");
      for (let turn = 0; turn < 8; turn++) await running.run(`turn ${turn}`, reader, { executeTool });
      const before = await running.stats();
      const reopened = await openSqliteSessionStore({ path });
      try {
        const resumed = (await engineOver(reopened)).session("s");
        // The governed view came back (not the whole history, which is much larger).
        expect(viewOf(await resumed.stats())).toEqual(viewOf(before));
        expect((await resumed.stats()).tokens).toBeLessThan(countAll(await resumed.history()) / 2);
        await running.addUser("and now?");
        await resumed.addUser("and now?");
        const expected = await running.prepare();
        const got = await resumed.prepare();
        // What the model is sent, byte for byte (the provider's cached prefix stays valid).
        expect(JSON.stringify(toOpenAIChat(got.messages))).toBe(
          JSON.stringify(toOpenAIChat(expected.messages)),
        );
        expect(got.tokens).toEqual(expected.tokens);
      } finally {
        await reopened.close();
      }
    } finally {
      await store.close();
    }
  });

  it("takes back a state an earlier version stored (version 1: rewritten messages inline)", async () => {
    const path = join(folder, "v1.db");
    const store = await openSqliteSessionStore({ path });
    try {
      const running = (await engineOver(store)).session("old");
      for (let turn = 0; turn < 6; turn++) await running.run(`turn ${turn}`, reader, { executeTool });
      const history = await running.history();
      const v2 = (await store.loadGovernorState("old"))!;
      const v1 = (await new GovernorStateCodec(store.blobs, "old").decode(v2, history)) as {
        version: number;
      } & Record<string, JsonValue>;
      expect(v1.version).toBe(1);
      const record = (await store.getSession("old"))!;
      await store.appendTurn("old", [], { expectedNextSeq: record.nextSeq, governorState: v1 });
      const before = await running.stats();
      const resumed = (await engineOver(store)).session("old");
      expect(viewOf(await resumed.stats())).toEqual(viewOf(before));
    } finally {
      await store.close();
    }
  });

  it("a state naming a blob that is gone is rebuilt (the whole history is the view until the next request)", async () => {
    const store = await openSqliteSessionStore({ path: join(folder, "gone.db") });
    try {
      const running = (await engineOver(store)).session("g");
      for (let turn = 0; turn < 6; turn++) await running.run(`turn ${turn}`, reader, { executeTool });
      const state = await storedState(store, "g");
      const ref = state.view.find((entry) => "ref" in entry)!["ref"] as string; // a blob the view names
      expect(await store.blobs.delete("g", ref)).toBe(true);
      const resumed = (await engineOver(store)).session("g");
      const history = await resumed.history();
      expect((await resumed.stats()).tokens).toBe(countAll(history));
      await resumed.addUser("go on");
      const request = await resumed.prepare();
      expect(request.tokens.total + request.tokens.reservedOutput).toBeLessThanOrEqual(24_000);
    } finally {
      await store.close();
    }
  });

  it("encodes a view turn after turn, from what it encoded last, as a fresh codec encodes it", async () => {
    const history: Message[] = Array.from({ length: 40 }, (_, index) => ({
      id: `m${index}`,
      sessionId: "s1",
      // Gaps in seq (hidden rows) break runs.
      seq: index + Math.floor(index / 7),
      turn: 0,
      createdAt: "2026-03-01T12:00:00.000Z",
      role: index % 2 === 0 ? "user" : "assistant",
      content: [{ type: "text", text: `message ${index}` }],
    }));
    // Each step: the view grows, or a checkpoint rewrites a message or drops a range.
    const step = fc.oneof(
      fc.record({ grow: fc.integer({ min: 1, max: 6 }) }),
      fc.record({ rewrite: fc.nat() }),
      fc.record({ drop: fc.nat(), count: fc.integer({ min: 1, max: 4 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
        const blobs = new MemoryBlobStore();
        const codec = new GovernorStateCodec(blobs, "s1");
        let view: Message[] = [];
        let next = 0;
        const rewritten = new Set<Message>();
        for (const change of steps) {
          if ("grow" in change) {
            view = [...view, ...history.slice(next, next + change.grow)];
            next = Math.min(history.length, next + change.grow);
          } else if ("rewrite" in change && view.length > 0) {
            const at = change.rewrite % view.length;
            const message = { ...view[at]!, content: [{ type: "text" as const, text: "rewritten" }] };
            rewritten.add(message);
            view = view.map((old, index) => (index === at ? message : old));
          } else if ("drop" in change && view.length > 0) {
            const at = change.drop % view.length;
            view = [...view.slice(0, at), ...view.slice(at + change.count)];
          }
          const state = {
            version: 1,
            view: view.map((message) => (rewritten.has(message) ? { message } : { id: message.id })),
            covered: 0,
          } as unknown as GovernorState;
          const encoded = (await codec.encode(state, view)) as { view: Record<string, unknown>[] };
          const fresh = (await new GovernorStateCodec(blobs, "s1").encode(state, view)) as typeof encoded;
          // The same entries (a fresh codec stores the rewritten messages again, under other refs).
          const shape = (entries: Record<string, unknown>[]) =>
            entries.map((entry) => ("ref" in entry ? "rewritten" : entry));
          expect(shape(encoded.view)).toEqual(shape(fresh.view));
          const decoded = (await new GovernorStateCodec(blobs, "s1").decode(
            encoded as unknown as JsonValue,
            history,
          )) as unknown as GovernorState;
          expect(decoded.view.map((entry) => ("id" in entry ? entry.id : entry.message.content))).toEqual(
            view.map((message) => (rewritten.has(message) ? message.content : message.id)),
          );
        }
      }),
      { numRuns: 150 },
    );
  });
});
