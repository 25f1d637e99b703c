// The errors each proxy route answers, in its provider's shape, plain and inside a stream: the right type for the
// status, ctxkit's code beside it, and the session named by the id the client sent. The conflict is made by
// another writer (a server without turn locks on the same database) storing a turn while the model answers.
import { afterEach, describe, expect, it } from "vitest";
import { readSse } from "./test-support/read-sse.test-helpers.ts";
import { startHarness, type ServerHarness } from "./test-support/server-harness.test-helpers.ts";

const harnesses: ServerHarness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((harness) => harness.close()));
});

/** A server whose upstream, while answering, lets another writer store a turn in `raceOn` (when set). */
async function racedHarness() {
  const race: { on?: string } = {};
  const harness: ServerHarness = await startHarness({
    responses: async () => {
      if (race.on !== undefined) {
        await harness.store.appendTurn(
          race.on,
          [{ role: "user", content: [{ type: "text", text: "elsewhere" }] }],
          {
            session: { owner: "acme" },
            expectedNextSeq: (await harness.store.getSession(race.on))?.nextSeq ?? 0,
          },
        );
      }
      return "reply";
    },
  });
  harnesses.push(harness);
  const post = (path: string, session: string, json: unknown) =>
    harness.call(path, {
      method: "POST",
      headers: { "x-ctxkit-session": session, "anthropic-version": "2023-06-01" },
      json,
    });
  /** Stores a first turn in `session` through `path`, then races the next one. */
  const raced = async (path: string, session: string, first: unknown, second: unknown) => {
    expect((await post(path, session, first)).status).toBe(200);
    race.on = `acme/${session}`;
    try {
      return await post(path, session, second);
    } finally {
      race.on = undefined;
    }
  };
  return { harness, raced };
}

const anthropic = (stream: boolean, ...texts: string[]) => ({
  model: "claude-test",
  max_tokens: 10,
  stream,
  messages: texts.map((content, index) => ({ role: index % 2 === 0 ? "user" : "assistant", content })),
});
const chat = (stream: boolean, text: string) => ({
  model: "m",
  stream,
  messages: [{ role: "user", content: text }],
});

describe("errors of the proxy routes", () => {
  it("answers a 409 on /v1/messages as Anthropic's conflict_error with its code, naming the client's session id", async () => {
    const { raced } = await racedHarness();
    const answer = await raced(
      "/v1/messages",
      "m1",
      anthropic(false, "hi"),
      anthropic(false, "hi", "reply", "again"),
    );
    expect(answer.status).toBe(409);
    const body = (await answer.json()) as {
      type: string;
      error: { type: string; code: string; message: string };
    };
    expect(body).toMatchObject({
      type: "error",
      error: { type: "conflict_error", code: "concurrent_write" },
    });
    expect(body.error.message).toMatch(/^session m1: /);
    expect(body.error.message).not.toContain("acme/");
  });

  it("puts the type and code in the error event of a Messages stream", async () => {
    const { raced } = await racedHarness();
    const answer = await raced(
      "/v1/messages",
      "m2",
      anthropic(true, "hi"),
      anthropic(true, "hi", "reply", "again"),
    );
    const events = await readSse(answer);
    expect(events.at(-1)).toMatchObject({
      event: "error",
      data: { type: "error", error: { type: "conflict_error", code: "concurrent_write" } },
    });
    expect(JSON.stringify(events.at(-1))).not.toContain("acme/");
  });

  it("puts the code in the error event of a chat completions stream and of a Responses stream", async () => {
    const { raced } = await racedHarness();
    const chatEvents = await readSse(
      await raced("/v1/chat/completions", "c1", chat(true, "hi"), chat(true, "again")),
    );
    expect(chatEvents.at(-1)?.data).toMatchObject({
      error: {
        type: "conflict_error",
        code: "concurrent_write",
        message: expect.stringMatching(/^session c1: /),
      },
    });
    const responses = (input: string) => ({ model: "m", stream: true, input });
    const responsesEvents = await readSse(
      await raced("/v1/responses", "r1", responses("hi"), responses("again")),
    );
    expect(responsesEvents.at(-1)?.data).toMatchObject({
      type: "error",
      code: "concurrent_write",
      message: expect.stringMatching(/^session r1: /),
    });
  });
});
