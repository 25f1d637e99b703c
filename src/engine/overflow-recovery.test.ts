import { describe, expect, it } from "vitest";
import type { GovernanceEvent } from "../governance/events.ts";
import { messageText } from "../model/blocks.ts";
import { sequentialIds } from "../model/ids.ts";
import { MemorySessionStore } from "../store/memory/index.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import type { CallModel } from "./agent-run.ts";
import { createContextEngine } from "./context-engine.ts";
import type { PreparedRequest } from "./prepared-request.ts";

/** OpenAI's answer to a prompt over the window, as its SDK throws it. */
function overflowError(): Error {
  return Object.assign(
    new Error(
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 131000 tokens.",
    ),
    { status: 400, code: "context_length_exceeded" },
  );
}

/** A model whose provider window is smaller than the engine was told: it refuses the first `refusals` calls. */
function refusingModel(refusals: number) {
  const requests: PreparedRequest[] = [];
  let calls = 0;
  const callModel: CallModel = async (request) => {
    requests.push(request);
    if (calls++ < refusals) throw overflowError();
    return { content: `answered with ${request.messages.length} messages`, usage: { input: 100, output: 5 } };
  };
  return { callModel, requests };
}

/** The CowAgent seed's session: eight turns, each reading a big file. */
async function longSession() {
  const store = new MemorySessionStore();
  const events: GovernanceEvent[] = [];
  const engine = await createContextEngine({
    store,
    contextWindow: 1_000_000,
    tokenCounter: new FakeTokenCounter(),
    summarizer: new FakeSummarizer(),
    ids: sequentialIds(),
    clock: () => new Date("2026-03-01T12:00:00Z"),
    onEvent: (event) => events.push(event),
  });
  const session = engine.session("cow");
  for (let turn = 1; turn <= 8; turn++) {
    let read = false;
    await session.run(
      `turn ${turn}`,
      async () => {
        if (read) return { content: `done ${turn}` };
        read = true;
        return { content: [{ type: "tool-call", id: `read_${turn}`, name: "read_file", input: {} }] };
      },
      { executeTool: async () => ({ content: `file ${turn}\n${"x".repeat(30_000)}` }) },
    );
  }
  return { store, session, events };
}

describe("overflow recovery in session.run()", () => {
  it("a provider overflow trims the context to the last 5 turns, clips 10k characters, and retries", async () => {
    const { store, session, events } = await longSession();
    const model = refusingModel(1);
    const result = await session.run("turn 9", model.callModel);
    expect(result.stoppedBy).toBe("answer");
    expect(result.recoveries).toEqual(["trimmed"]);
    const retried = model.requests[1]!;
    expect(retried.messages.filter((message) => message.role === "user").map(messageText)).toEqual([
      "turn 5",
      "turn 6",
      "turn 7",
      "turn 8",
      "turn 9",
    ]);
    expect(retried.messages.every((message) => messageText(message).length <= 10_100)).toBe(true);
    expect(events.filter((event) => event.type === "emergency-recovery")).toMatchObject([
      { stage: "trimmed" },
    ]);
    // Only the view changed: the store keeps every message, and the turn was committed.
    expect(await store.loadMessages("cow")).toHaveLength(8 * 4 + 2);
    // The next request continues from the trimmed view.
    const next = refusingModel(0);
    await session.run("turn 10", next.callModel);
    expect(next.requests[0]!.messages.slice(0, retried.messages.length)).toEqual(retried.messages);
  });

  it("a second overflow in a row clears the context down to the current instruction, and says so", async () => {
    const { session, events } = await longSession();
    const model = refusingModel(2);
    const result = await session.run("turn 9", model.callModel);
    expect(result.recoveries).toEqual(["trimmed", "cleared"]);
    expect(model.requests[2]!.messages.map(messageText)).toEqual(["turn 9"]);
    expect(messageText(result.reply!)).toBe("answered with 1 messages");
    expect(
      events.filter((event) => event.type === "emergency-recovery").map((event) => event.type),
    ).toHaveLength(2);
  });

  it("a third overflow is thrown, and nothing of the turn is stored", async () => {
    const { store, session } = await longSession();
    const model = refusingModel(3);
    await expect(session.run("turn 9", model.callModel)).rejects.toThrow(/maximum context length/);
    expect(model.requests).toHaveLength(3);
    expect(await store.loadMessages("cow")).toHaveLength(8 * 4);
    // Other failures are not recovered from.
    await expect(
      session.run("turn 9 again", async () => {
        throw new Error("rate limited");
      }),
    ).rejects.toThrow("rate limited");
  });
});
