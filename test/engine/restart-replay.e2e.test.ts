// One session core, proven on a real session: a shared transcript replayed through the engine on SQLite, once in
// one process and once with a process restart (a new store handle and engine on the same file) before every
// request. Every request must go out byte for byte the same — the governed view, its summaries and the cache
// breakpoints — so a restart costs no cache miss.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createContextEngine } from "../../src/engine/context-engine.ts";
import type { EngineSession } from "../../src/engine/engine-session.ts";
import { importTranscriptFile } from "../../src/formats/transcripts/import-transcript.ts";
import type { Message } from "../../src/model/message.ts";
import { openSqliteSessionStore } from "../../src/store/sqlite/index.ts";
import { FakeTokenCounter } from "../../src/test/fake-token-counter.ts";
import { transcriptPath } from "../support/transcripts.ts";

/**
 * The sessions replayed, each in a window it outgrows. The second compacts often in 16k, so that summaries replace
 * messages governance still follows for what the agent uses again (a restart must find them in the store).
 */
const CASES = [
  {
    transcript:
      "claude-code__daaain-claude-code-log/-Users-dain-workspace-JSSoundRecorder/7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl",
    window: 24_000,
  },
  { transcript: "claude-code__marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl", window: 16_000 },
] as const;
const SESSION = "replayed";

const directory = mkdtempSync(join(tmpdir(), "ctxkit-restart-replay-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** A session over `path` as a freshly started process has it. */
async function open(path: string, window: number) {
  const store = await openSqliteSessionStore({ path });
  const engine = await createContextEngine({
    store,
    contextWindow: window,
    maxOutputTokens: 2_000,
    tokenCounter: new FakeTokenCounter(),
    clock: () => new Date("2026-01-01T00:00:00Z"),
  });
  return { store, session: engine.session(SESSION) };
}

/**
 * Replays `messages` into a session, preparing a request before each assistant reply; `restart` reopens the
 * store and engine before each request. Returns every request as the Anthropic wire payload (breakpoints
 * included) and how many of them were checkpoints.
 */
async function replay(messages: readonly Message[], path: string, window: number, restart: boolean) {
  let current = await open(path, window);
  const payloads: string[] = [];
  let checkpoints = 0;
  const next = async (): Promise<EngineSession> => {
    await current.session.commit();
    if (restart) {
      await current.store.close();
      current = await open(path, window);
    }
    return current.session;
  };
  let session = current.session;
  for (const message of messages) {
    if (message.role === "user" && !message.content.some((block) => block.type === "tool-result")) {
      await session.addUser(message.content);
    } else if (message.role === "assistant") {
      session = await next();
      const prepared = await session.prepare({ system: "You are a coding agent." });
      if (prepared.checkpoint) checkpoints++;
      payloads.push(JSON.stringify(prepared.toAnthropic({ model: "claude-sonnet-4-5" })));
      // The provider's count, a tenth above ctxkit's (the recorded usage includes the agent's own system prompt
      // and tools, which this replay does not send): the usage anchor is part of what a restart must keep.
      const input = Math.round(prepared.tokens.total * 1.1);
      await session.recordAssistant({ content: message.content, usage: { input, output: 100 } });
    } else {
      const results = message.content.flatMap((block) =>
        block.type === "tool-result" ? [{ ...block, type: undefined }] : [],
      );
      await session.recordToolResults(results.map(({ type: _type, ...result }) => result));
    }
  }
  await current.session.commit();
  await current.store.close();
  return { payloads, checkpoints };
}

describe("a shared transcript replayed with a restart before every request", () => {
  for (const { transcript, window } of CASES) {
    it(`sends every request byte for byte as the run without restarts does (${transcript.split("/")[0]}, ${window / 1000}k)`, async () => {
      const [conversation] = await importTranscriptFile(transcriptPath(transcript));
      const messages = conversation!.messages.filter((message) => message.role !== "system");
      const name = transcript.split("/")[0]!;
      const steady = await replay(messages, join(directory, `${name}-steady.db`), window, false);
      const restarted = await replay(messages, join(directory, `${name}-restarted.db`), window, true);
      expect(steady.payloads.length).toBeGreaterThan(20);
      // Governance acted: the history outgrew the window and checkpoints rewrote the view.
      expect(steady.checkpoints).toBeGreaterThan(0);
      expect(restarted.checkpoints).toBe(steady.checkpoints);
      restarted.payloads.forEach((payload, index) =>
        expect(payload, `request ${index}`).toBe(steady.payloads[index]),
      );
    }, 180_000);
  }
});
