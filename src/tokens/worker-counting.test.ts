import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createExactCounter } from "./exact-counter.ts";
import { countOnWorker, WORKER_COUNT_FROM } from "./worker-counting.ts";

describe("counting on the counting thread", () => {
  it("counts exactly as the calling thread does", async () => {
    const counter = await createExactCounter("o200k_base");
    const text = "The quick brown fox, 42 times: ".repeat(Math.ceil(WORKER_COUNT_FROM / 30));
    const counted = await countOnWorker("o200k_base", text);
    expect(counted).toBeDefined();
    expect(counted).toBe(counter.countText(text));
  });

  it("gives an exact counter's async count of a long text the same value as its sync count", async () => {
    const counter = await createExactCounter("cl100k_base");
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 3 }),
        async (unit, times) => {
          const text = unit.repeat(Math.ceil((times * WORKER_COUNT_FROM) / unit.length));
          const onWorker = await counter.countTextAsync!(text);
          // A fresh counter has not remembered the text: it counts it on this thread.
          const fresh = await createExactCounter("cl100k_base");
          expect(onWorker).toBe(fresh.countText(text));
        },
      ),
      { numRuns: 5 },
    );
  });
});
