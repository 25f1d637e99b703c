import fc from "fast-check";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { HttpError } from "../http/http-error.ts";
import { ReplayGate } from "./replay-gate.ts";

describe("ReplayGate", () => {
  it("runs at most maxActive replays at once, lets maxWaiting wait in order and refuses the rest with 429", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 0, max: 4 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 12 }),
        async (maxActive, maxWaiting, delays) => {
          const gate = new ReplayGate(maxActive, maxWaiting);
          let running = 0;
          let most = 0;
          const started: number[] = [];
          const outcomes = await Promise.allSettled(
            delays.map((delay, index) =>
              gate.run(async () => {
                started.push(index);
                running++;
                most = Math.max(most, running);
                await sleep(delay);
                running--;
                return index;
              }),
            ),
          );
          const admitted = Math.min(delays.length, maxActive + maxWaiting);
          expect(most).toBeLessThanOrEqual(maxActive);
          // The first ones are admitted and start in arrival order; the others are refused at once.
          expect(started).toEqual(delays.slice(0, admitted).map((_, index) => index));
          outcomes.forEach((outcome, index) => {
            if (index < admitted) expect(outcome).toEqual({ status: "fulfilled", value: index });
            else {
              expect(outcome.status).toBe("rejected");
              const error = (outcome as PromiseRejectedResult).reason as HttpError;
              expect(error).toMatchObject({ status: 429, code: "rate_limited" });
              expect(error.headers["Retry-After"]).toBe("5");
            }
          });
          // Every slot was given back: a new replay runs at once.
          expect(await gate.run(async () => "again")).toBe("again");
        },
      ),
      { numRuns: 60 },
    );
  });

  it("gives a failed replay's slot to the next one", async () => {
    const gate = new ReplayGate(1, 1);
    const failing = gate.run(async () => {
      await sleep(5);
      throw new Error("replay failed");
    });
    const next = gate.run(async () => "next ran");
    await expect(failing).rejects.toThrow("replay failed");
    expect(await next).toBe("next ran");
  });
});
