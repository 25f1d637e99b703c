import { describe, expect, it } from "vitest";
import { eventLoopYielder } from "./event-loop-yielder.ts";

function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe("eventLoopYielder", () => {
  it("gives the event loop no turn within the budget", async () => {
    const breathe = eventLoopYielder(1_000);
    let turns = 0;
    setImmediate(() => turns++);
    await breathe();
    expect(turns).toBe(0);
  });

  it("gives the event loop a turn once the budget of work has passed", async () => {
    const breathe = eventLoopYielder(5);
    let turns = 0;
    setImmediate(() => turns++);
    busy(10);
    await breathe();
    expect(turns).toBe(1);
  });
});
