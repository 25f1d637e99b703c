import { describe, expect, it } from "vitest";
import { WordsDrain } from "./words-drain.ts";

/** A queue of `waiting` rows that `indexBatch` takes from, recording each batch; fails while `failing` is set. */
function queue() {
  const state = { waiting: 0, batches: [] as number[], failing: false };
  const indexBatch = async (limit: number) => {
    if (state.failing) throw new Error("disk full");
    const taken = Math.min(limit, state.waiting);
    state.waiting -= taken;
    if (taken > 0) state.batches.push(taken);
    return taken;
  };
  return { state, indexBatch };
}

describe("WordsDrain", () => {
  it("indexes what a write queued after its delay, with no further write", async () => {
    const { state, indexBatch } = queue();
    const drain = new WordsDrain({ indexBatch, delayMs: 10, batch: 4 });
    state.waiting = 3;
    drain.noteWritten(3);
    expect(state.waiting).toBe(3);
    await expect.poll(() => state.waiting).toBe(0);
    expect(state.batches).toEqual([3]);
    await drain.close();
  });

  it("catches up before the next write once a batch waits (a single writer), in batches", async () => {
    const { state, indexBatch } = queue();
    const drain = new WordsDrain({ indexBatch, delayMs: 60_000, batch: 4, catchUp: true });
    state.waiting = 10;
    drain.noteWritten(3);
    await drain.drainDue();
    expect(state.waiting).toBe(10);
    drain.noteWritten(7);
    expect(drain.due).toBe(true);
    await drain.drainDue();
    expect(state.batches).toEqual([4, 4, 2]);
    expect(drain.due).toBe(false);
    await drain.close();
  });

  it("never fails the write about to run when indexing fails; the rows wait and are indexed later", async () => {
    const { state, indexBatch } = queue();
    const drain = new WordsDrain({ indexBatch, delayMs: 5, batch: 2, catchUp: true });
    state.waiting = 2;
    state.failing = true;
    drain.noteWritten(2);
    await expect(drain.drainDue()).resolves.toBeUndefined();
    expect(state.waiting).toBe(2);
    await expect(drain.flush()).rejects.toThrow("disk full");
    state.failing = false;
    await expect.poll(() => state.waiting).toBe(0);
    await drain.close();
  });

  it("indexes what waits at close, and nothing after", async () => {
    const { state, indexBatch } = queue();
    const drain = new WordsDrain({ indexBatch, delayMs: 60_000, batch: 100 });
    state.waiting = 5;
    drain.noteWritten(5);
    await drain.close();
    expect(state.waiting).toBe(0);
    state.waiting = 1;
    drain.noteWritten(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(state.waiting).toBe(1);
  });
});
