// ctxkit_proxy_overhead_seconds is ctxkit's own time: with an upstream that takes 300 ms to answer, the overhead
// per proxied turn stays far below it (the upstream's time is measured apart, in ctxkit_upstream_duration_seconds).
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { startHarness } from "../../src/server/test-support/server-harness.test-helpers.ts";

const DELAY_MS = 300;

function sample(text: string, name: string): number {
  const match = new RegExp(`^${name} ([0-9.e+-]+)$`, "m").exec(text);
  if (match === null) throw new Error(`${name} not in the metrics`);
  return Number(match[1]);
}

describe("the proxy overhead metric", () => {
  it("counts ctxkit's own time, not the time spent waiting on a slow upstream", async () => {
    const harness = await startHarness({
      responses: async () => {
        await new Promise((resolve) => setTimeout(resolve, DELAY_MS));
        return "slow answer";
      },
    });
    try {
      const client = new OpenAI({
        baseURL: `${harness.server.url}/v1`,
        apiKey: harness.acme,
        maxRetries: 0,
        defaultHeaders: { "X-Ctxkit-Session": "slow" },
      });
      for (let turn = 0; turn < 4; turn++)
        await client.chat.completions.create({
          model: "m",
          messages: [{ role: "user", content: `turn ${turn}` }],
        });
      const text = await (await harness.call("/metrics", { key: harness.operator })).text();
      const turns = sample(text, "ctxkit_proxy_overhead_seconds_count");
      expect(turns).toBe(4);
      const upstream = sample(text, "ctxkit_upstream_duration_seconds_sum") / turns;
      const overhead = sample(text, "ctxkit_proxy_overhead_seconds_sum") / turns;
      expect(upstream).toBeGreaterThanOrEqual(DELAY_MS / 1000);
      expect(overhead).toBeLessThan(DELAY_MS / 1000 / 2);
    } finally {
      await harness.close();
    }
  });
});
