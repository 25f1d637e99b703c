import { describe, expect, it } from "vitest";
import { RecentBodies } from "./recent-bodies.ts";

const message = (text: string) => ({ content: [{ type: "text" as const, text }] });

describe("RecentBodies", () => {
  it("gives a remembered message back once, only for the very body written for it", () => {
    const recent = new RecentBodies();
    const first = message("first");
    recent.remember("s1", 0, '{"a":1}', first);
    recent.remember("s1", 1, '{"b":1}', message("second"));
    expect(recent.take("s1", 0, '{"a":1}')).toBe(first);
    expect(recent.take("s1", 0, '{"a":1}')).toBeUndefined();
    // The place was written again by another write (the first rolled back): its body differs.
    expect(recent.take("s1", 1, '{"b":2}')).toBeUndefined();
    expect(recent.take("s2", 0, '{"a":1}')).toBeUndefined();
  });

  it("forgets the oldest beyond its capacity", () => {
    const recent = new RecentBodies();
    for (let seq = 0; seq < 3000; seq++) recent.remember("s", seq, `${seq}`, message(`${seq}`));
    expect(recent.take("s", 0, "0")).toBeUndefined();
    expect(recent.take("s", 2999, "2999")).toEqual(message("2999"));
    // Long bodies are not kept, and the text kept in all is bounded.
    recent.remember("s", 5000, "x".repeat(100_000), message("long"));
    expect(recent.take("s", 5000, "x".repeat(100_000))).toBeUndefined();
    for (let seq = 0; seq < 200; seq++) recent.remember("t", seq, `${seq}`.padEnd(60_000), message(`${seq}`));
    expect(recent.take("t", 0, "0".padEnd(60_000))).toBeUndefined();
    expect(recent.take("t", 199, "199".padEnd(60_000))).toEqual(message("199"));
  });
});
