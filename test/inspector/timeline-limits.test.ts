// The inspector's replays on a shared server: a big session's timeline does not stall the other clients, and a
// session over the replay limits is refused with a typed error that says how to inspect it instead.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Message } from "../../src/model/message.ts";
import { DEFAULT_PRICES } from "../../src/pricing/model-prices.ts";
import {
  startHarness,
  type ServerHarness,
} from "../../src/server/test-support/server-harness.test-helpers.ts";
import { conversationDump } from "../../src/store/jsonl/conversation-dump.ts";

const LIMITS = { maxReplayMessages: 400, maxReplayCharacters: 3_000_000 };
let harness: ServerHarness;

/** A session of `requests` tool calls, each answered by `outputChars` characters of file content. */
function agentSession(id: string, requests: number, outputChars: number): Message[] {
  const messages: Message[] = [];
  const add = (role: Message["role"], content: Message["content"]) =>
    messages.push({
      id: `${id}-m${messages.length}`,
      sessionId: id,
      seq: messages.length,
      turn: 1,
      role,
      createdAt: new Date(Date.UTC(2026, 0, 1) + messages.length * 1_000).toISOString(),
      content,
    });
  add("user", [{ type: "text", text: "read every file and fix the bug" }]);
  for (let index = 0; index < requests; index++) {
    const callId = `call-${index}`;
    add("assistant", [
      { type: "tool-call", id: callId, name: "read", input: { path: `src/file-${index}.ts` } },
    ]);
    const lines = Array.from(
      { length: Math.ceil(outputChars / 50) },
      (_, line) => `export const value${line}_${index} = ${line * index}; // line ${line}`,
    );
    add("tool", [
      { type: "tool-result", callId, toolName: "read", content: lines.join("\n").slice(0, outputChars) },
    ]);
  }
  add("assistant", [{ type: "text", text: "Fixed." }]);
  return messages;
}

async function store(id: string, messages: readonly Message[]): Promise<void> {
  const dump = conversationDump(
    { id, format: "ctxkit", source: "test", messages },
    { now: new Date().toISOString(), prices: DEFAULT_PRICES },
  );
  await harness.store.restoreSession({ ...dump, session: { ...dump.session, owner: "acme" } });
}

beforeAll(async () => {
  // A 200k window: every request's view holds most of the history, as a real agent's does.
  harness = await startHarness({ contextWindow: 200_000, server: { limits: LIMITS } });
  await store("big", agentSession("big", 150, 15_000));
  await store("many", agentSession("many", 200, 10));
  await store("wide", agentSession("wide", 4, 1_000_000));
});

afterAll(async () => {
  await harness?.close();
});

describe("inspector replays on a shared server", () => {
  it.each(["timeline", "replay"])("answer other clients while a big session's %s is built", async (route) => {
    let built: number | undefined;
    const started = performance.now();
    const replay = harness.call(`/v1/sessions/big/${route}`).then(async (answer) => {
      const body = (await answer.json()) as { requests?: unknown[] };
      built = performance.now();
      return { status: answer.status, requests: body.requests?.length };
    });
    // Health checks one after the other for as long as the build runs: a stalled event loop answers none until
    // the build is done. The build's own length varies with the machine and the governor's work, so the check is
    // the pace of the answers, not their number: no stretch without one longer than a third of the build.
    const answered: number[] = [];
    while (built === undefined) {
      const health = await harness.call("/health", { key: null });
      expect(health.status).toBe(200);
      await health.arrayBuffer();
      if (built === undefined) answered.push(performance.now());
    }
    expect(await replay).toEqual({ status: 200, requests: 151 });
    const marks = [started, ...answered, built];
    const longestWait = Math.max(...marks.slice(1).map((mark, index) => mark - marks[index]!));
    expect(answered.length).toBeGreaterThanOrEqual(2);
    expect(longestWait).toBeLessThan((built - started) / 3);
  });

  it("refuse a session over the replay limits, by messages or by characters, with 422 session_too_large", async () => {
    for (const id of ["many", "wide"]) {
      for (const path of [
        `/v1/sessions/${id}/timeline`,
        `/v1/sessions/${id}/timeline/0`,
        `/v1/sessions/${id}/replay`,
      ]) {
        const answer = await harness.call(path);
        expect(answer.status, path).toBe(422);
        const { error } = (await answer.json()) as { error: { code: string; message: string } };
        expect(error.code).toBe("session_too_large");
        expect(error.message).toContain(`session "${id}" is too large for the inspector to replay`);
        expect(error.message).toContain("ctxkit replay");
        expect(error.message).toContain(`/v1/sessions/${id}/export`);
      }
    }
    const many = await (await harness.call("/v1/sessions/many/timeline")).json();
    expect(JSON.stringify(many)).toContain("402 stored messages, over the server's limit of 400");
    const wide = await (await harness.call("/v1/sessions/wide/timeline")).json();
    expect(JSON.stringify(wide)).toContain("over the server's limit of 3000000");
  });
});
