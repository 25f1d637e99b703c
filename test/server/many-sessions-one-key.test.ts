// 50 agent sessions on one API key, 10 turns each, all at once through the official client with its retries off:
// the default limits let every turn through (a request over the rate waits its turn instead of failing).
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { startHarness } from "../../src/server/test-support/server-harness.test-helpers.ts";

const SESSIONS = 50;
const TURNS = 10;

describe("the default limits", () => {
  it("let 50 concurrent sessions × 10 turns on one key through without a failed turn", async () => {
    const harness = await startHarness({ responses: () => "ok" });
    try {
      const failures: unknown[] = [];
      await Promise.all(
        Array.from({ length: SESSIONS }, async (_, session) => {
          const client = new OpenAI({
            baseURL: `${harness.server.url}/v1`,
            apiKey: harness.acme,
            maxRetries: 0,
            defaultHeaders: { "X-Ctxkit-Session": `agent-${session}` },
          });
          for (let turn = 0; turn < TURNS; turn++) {
            await client.chat.completions
              .create({ model: "m", messages: [{ role: "user", content: `turn ${turn}` }] })
              .catch((error: unknown) => failures.push(error));
          }
        }),
      );
      expect(failures).toEqual([]);
      for (let session = 0; session < SESSIONS; session++)
        expect((await harness.store.getSession(`acme/agent-${session}`))?.messageCount).toBe(2 * TURNS);
    } finally {
      await harness.close();
    }
  });

  it("still refuse with 429 and Retry-After once a small limit's queue is full", async () => {
    const harness = await startHarness({
      responses: () => "ok",
      server: { limits: { rateLimit: { requestsPerSecond: 1, burst: 2, maxWaitMs: 1_000 } } },
    });
    try {
      const answers = await Promise.all(Array.from({ length: 6 }, () => harness.call("/v1/me")));
      const statuses = answers.map((answer) => answer.status).sort();
      // Two from the burst, one queued for its second; the rest refused.
      expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
      const refused = answers.find((answer) => answer.status === 429)!;
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    } finally {
      await harness.close();
    }
  });
});
