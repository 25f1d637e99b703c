// `GET /v1/sessions/:id/context` of a session loaded from the store (no request sent by this process yet) shows
// what the next request would send without changing anything that request will do.
import { afterEach, describe, expect, it } from "vitest";
import { MemorySessionStore } from "../../src/store/memory/index.ts";
import { readSse } from "../../src/server/test-support/read-sse.test-helpers.ts";
import {
  startHarness,
  type ServerHarness,
} from "../../src/server/test-support/server-harness.test-helpers.ts";

const harnesses: ServerHarness[] = [];

afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((harness) => harness.close()));
});

async function turn(harness: ServerHarness, message: string): Promise<void> {
  const response = await harness.call("/v1/sessions/viewed/turns", {
    method: "POST",
    json: { message, system: "You are a test." },
  });
  expect(response.status).toBe(200);
  await readSse(response);
}

/** The governor state the session's latest write stored, with its request count. */
async function storedState(store: MemorySessionStore): Promise<{ requests: number }> {
  const state = (await store.loadGovernorState("acme/viewed")) as { requests?: number } | undefined;
  expect(state?.requests).toBeTypeOf("number");
  return state as { requests: number };
}

describe("viewing a session's context", () => {
  it("after a restart, neither changes the stored governor state nor what the next request counts and stores", async () => {
    const store = new MemorySessionStore();
    const first = await startHarness({ store, responses: () => "ok ".repeat(40) });
    harnesses.push(first);
    for (let index = 0; index < 4; index++) await turn(first, `question ${index} ${"q".repeat(2_000)}`);
    await first.close();
    harnesses.splice(0);

    // A new server process on the same store: it has sent nothing for the session.
    const second = await startHarness({ store, responses: () => "ok ".repeat(40) });
    harnesses.push(second);
    const before = await storedState(store);
    const blobsBefore = JSON.stringify(await store.dumpSession("acme/viewed"));
    for (let look = 0; look < 3; look++) {
      const answer = await second.call("/v1/sessions/viewed/context");
      expect(answer.status).toBe(200);
      expect(((await answer.json()) as { source: string }).source).toBe("prepared");
    }
    expect(await storedState(store)).toEqual(before);
    expect(JSON.stringify(await store.dumpSession("acme/viewed"))).toBe(blobsBefore);
    expect(second.upstream.requests).toHaveLength(0);

    // The next real request is the governor's next request, as if nobody had looked.
    await turn(second, "one more question");
    expect((await storedState(store)).requests).toBe(before.requests + 1);
  });
});
