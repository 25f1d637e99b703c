import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { SessionRecord } from "../session-store.ts";
import { KnownSessions } from "./known-sessions.ts";

const record = (id: string, nextSeq = 0): SessionRecord => ({
  id,
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:00.000Z",
  messageCount: nextSeq,
  turnCount: 0,
  nextSeq,
  usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
  cost: 0,
  metadata: {},
  executorSessionIds: {},
});

describe("KnownSessions", () => {
  it("keeps the latest record of each session, and forgets on request", () => {
    const known = new KnownSessions();
    known.remember(record("a", 2));
    known.remember(record("a", 4));
    expect(known.get("a")?.nextSeq).toBe(4);
    known.forget("a");
    expect(known.get("a")).toBeUndefined();
  });

  it("holds at most its limit, forgetting the sessions written longest ago", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 60 }), (writes) => {
        const known = new KnownSessions(3);
        writes.forEach((id, index) => known.remember(record(`s${id}`, index)));
        // The three sessions written most recently, each with its latest record.
        const recent = [...new Set([...writes].reverse())].slice(0, 3);
        for (let id = 0; id <= 9; id++) {
          const expected = recent.includes(id) ? writes.lastIndexOf(id) : undefined;
          expect(known.get(`s${id}`)?.nextSeq).toBe(expected);
        }
      }),
    );
  });
});
