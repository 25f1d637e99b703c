// The stateful proxy after a server restart: a conversation through `/v1/chat/completions` with
// `X-Ctxkit-Session`, on a SQLite file, once on one server and once with the server restarted (a new process's
// store handle, engine and upstream connection) before every turn. The upstream must see the same requests, so
// the provider's cached prefix survives the restart.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, describe, expect, it } from "vitest";
import {
  startHarness,
  type ServerHarness,
} from "../../src/server/test-support/server-harness.test-helpers.ts";
import { openSqliteSessionStore } from "../../src/store/sqlite/index.ts";
import type { FakeOpenAIRequest } from "../../src/test/fake-openai-server.ts";

const TURNS = 14;
const directory = mkdtempSync(join(tmpdir(), "ctxkit-proxy-restart-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** The user's message of turn `turn`: a question with a pasted log big enough to make the history outgrow the window. */
const question = (turn: number) =>
  `Turn ${turn}: what does this log say?\n${Array.from({ length: 90 }, (_, line) => `[${turn}:${line}] worker ${line % 7} finished job ${turn * 100 + line}`).join("\n")}`;

/** The upstream's answer: names the turn; reports 10% more prompt tokens than the body's size suggests. */
const answer = (request: FakeOpenAIRequest) => {
  const body = JSON.stringify(request.body.messages);
  return {
    text: `Answer to ${request.body.messages?.length ?? 0} messages.`,
    usage: { promptTokens: Math.round((body.length / 4) * 1.1), completionTokens: 10 },
  };
};

async function turnOn(harness: ServerHarness, turn: number): Promise<void> {
  const client = new OpenAI({
    baseURL: `${harness.server.url}/v1`,
    apiKey: harness.acme,
    maxRetries: 0,
    defaultHeaders: { "X-Ctxkit-Session": "restarted-chat" },
  });
  await client.chat.completions.create({
    model: "m",
    messages: [
      { role: "system", content: "You read logs." },
      { role: "user", content: question(turn) },
    ],
  });
}

/** Runs the conversation; returns what the upstream received, request by request. */
async function converse(path: string, restartEveryTurn: boolean): Promise<string[]> {
  const received: string[] = [];
  const start = async () =>
    startHarness({
      store: await openSqliteSessionStore({ path }),
      contextWindow: 8_000,
      responses: (request) => {
        received.push(JSON.stringify(request.body.messages));
        return answer(request);
      },
    });
  let harness = await start();
  for (let turn = 1; turn <= TURNS; turn++) {
    if (restartEveryTurn && turn > 1) {
      await harness.close();
      await harness.store.close();
      harness = await start();
    }
    await turnOn(harness, turn);
  }
  await harness.close();
  await harness.store.close();
  return received;
}

describe("the stateful proxy restarted before every turn", () => {
  it("sends the upstream exactly what a server that never restarted sends", async () => {
    const steady = await converse(join(directory, "steady.db"), false);
    const restarted = await converse(join(directory, "restarted.db"), true);
    expect(steady).toHaveLength(TURNS);
    restarted.forEach((body, index) => expect(body, `turn ${index + 1}`).toBe(steady[index]));
    // Governance acted: the history outgrew the window, so later requests hold a summary of the middle turns (the
    // first task stays, as the head anchor).
    const total = Array.from({ length: TURNS }, (_, turn) => question(turn + 1).length).reduce(
      (a, b) => a + b,
    );
    expect(total / 4).toBeGreaterThan(8_000);
    expect(steady.at(-1)).toContain("Turn 1: what");
    const last = JSON.parse(steady.at(-1)!) as unknown[];
    expect(last.length).toBeLessThan(2 * TURNS);
  });
});
