import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Message } from "../model/message.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import { SOUND_RECORDER_SESSION, transcriptMessages } from "../../test/support/transcripts.ts";
import { neededContext } from "./needed-context.ts";
import { resolveGovernorSettings } from "./governor-settings.ts";
import { DEFAULT_REUSE_RATES, DEFAULT_REUSE_RATES_WEIGHT, reuseRate } from "./reuse-rates.ts";
import { SessionReuse } from "./session-reuse.ts";

const fileLines = (name: string, count: number) =>
  Array.from(
    { length: count },
    (_, line) => `  const ${name}Value${line} = compute${name}(${line}, "${name}");`,
  );

/**
 * `cycles` times: a read of a file, `gap` unrelated commands, then an edit quoting a line of that read — an agent
 * that works from reads `gap + 1` replies old.
 */
function editsFromOldReads(cycles: number, gap: number, readLines = 40): Message[] {
  const builder = new HistoryBuilder().user("refactor the modules");
  for (let cycle = 0; cycle < cycles; cycle++) {
    const lines = fileLines(`mod${cycle}`, readLines);
    builder.step([{ name: "Read", input: { file_path: `src/mod${cycle}.ts` }, output: lines.join("\n") }]);
    for (let step = 0; step < gap; step++)
      builder.step([{ name: "Bash", input: { command: `npm test -- part${cycle}x${step}` }, output: "ok" }]);
    builder.step([
      {
        name: "Edit",
        input: {
          file_path: `src/mod${cycle}.ts`,
          old_string: lines[7]!.trim(),
          new_string: "const renamed = 1;",
        },
        output: "ok",
      },
    ]);
  }
  return builder.build();
}

function tracked(messages: readonly Message[]): SessionReuse {
  const tracker = new SessionReuse();
  for (const message of messages) tracker.observe(message);
  return tracker;
}

describe("SessionReuse counts", () => {
  it("move only with a reply, so a governor fits the rates again only then", () => {
    const messages = editsFromOldReads(3, 2);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: messages.length }), (cut) => {
        const tracker = new SessionReuse();
        for (const message of messages.slice(0, cut - 1)) tracker.observe(message);
        const before = tracker.rates(DEFAULT_REUSE_RATES, DEFAULT_REUSE_RATES_WEIGHT);
        const replies = tracker.replies;
        const next = messages[cut - 1]!;
        tracker.observe(next);
        if (next.role === "assistant") expect(tracker.replies).toBe(replies + 1);
        else {
          expect(tracker.replies).toBe(replies);
          expect(tracker.rates(DEFAULT_REUSE_RATES, DEFAULT_REUSE_RATES_WEIGHT)).toEqual(before);
        }
      }),
    );
  });
});

describe("SessionReuse", () => {
  it("counts a read as used by the reply that quotes it, at its age, and as alive at every age before", () => {
    // Read, 3 commands, then the edit: the read arrives after the 1st reply and the edit, the 5th, quotes it at
    // age 3 (bucket 3–4).
    const counts = tracked(editsFromOldReads(1, 3)).counts();
    expect(counts.used.read).toEqual([0, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    expect(counts.alive.read).toEqual([1, 1, 1, 1, 0, 0, 0, 0, 0, 0]);
    expect(counts.replies).toBe(5);
    // The shell outputs were never quoted.
    expect(counts.used.shell.every((used) => used === 0)).toBe(true);
    expect(counts.alive.shell[0]).toBe(3);
  });

  it("gives the prior's rates until the session has counted anything, and the session's own once it has many", () => {
    const fresh = new SessionReuse().rates(DEFAULT_REUSE_RATES, DEFAULT_REUSE_RATES_WEIGHT);
    for (const [kind, row] of Object.entries(DEFAULT_REUSE_RATES))
      for (const [bucket, rate] of row.entries())
        expect(fresh[kind as keyof typeof fresh][bucket]).toBeCloseTo(rate, 12);
    // This agent uses every read once, at age 23 (bucket 21–33): far above the corpus's 1.3%.
    const rates = tracked(editsFromOldReads(30, 22)).rates(DEFAULT_REUSE_RATES, DEFAULT_REUSE_RATES_WEIGHT);
    expect(rates.read[7]).toBeGreaterThan(0.025);
    expect(reuseRate("read", 23)).toBeLessThan(0.02);
    // A weight no session reaches keeps the rates fixed.
    const fixed = tracked(editsFromOldReads(30, 22)).rates(DEFAULT_REUSE_RATES, 1e12);
    expect(fixed.read[7]).toBeCloseTo(DEFAULT_REUSE_RATES.read[7]!, 6);
  });

  it("makes governance keep what this agent goes back to, which the corpus's rates would let go", () => {
    const history = editsFromOldReads(30, 22);
    // A new session of the same agent's kind: a large read, then 22 commands — the next reply is the one in which
    // this agent edits from such a read.
    const ongoing = editsFromOldReads(1, 22, 1_500).slice(0, -2);
    const read = 2;
    const counter = new FakeTokenCounter();
    const context = {
      settings: resolveGovernorSettings({ groundingTarget: 0.98 }),
      window: { contextWindow: 200_000, reservedOutput: 8_000, usable: 192_000 },
      tokensOf: (message: Message) => counter.countMessage(message),
      fixedTokens: 10_000,
    };
    expect(ongoing[read]!.role).toBe("tool");
    expect(neededContext(ongoing, context).has(read)).toBe(false);
    const learned = tracked(history).rates(DEFAULT_REUSE_RATES, DEFAULT_REUSE_RATES_WEIGHT);
    expect(neededContext(ongoing, { ...context, reuseRates: learned }).has(read)).toBe(true);
  });

  it("resumed from its counts and the stored history, counts the rest of a real session as if it never stopped", async () => {
    const messages = await transcriptMessages(SOUND_RECORDER_SESSION);
    const byId = new Map(messages.map((message) => [message.id, message]));
    const live = tracked(messages).counts();
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: messages.length }), async (split) => {
        const first = tracked(messages.slice(0, split));
        const resumed = SessionReuse.resume(first.counts(), messages, split, (id) => byId.get(id));
        const recounted = SessionReuse.resume(undefined, messages, split, () => undefined);
        for (const message of messages.slice(split)) {
          resumed.observe(message);
          recounted.observe(message);
        }
        expect(resumed.counts()).toEqual(live);
        expect(recounted.counts()).toEqual(live);
      }),
      { numRuns: 25 },
    );
    expect(live.used.read.some((used) => used > 0)).toBe(true);
  });

  it("resumed on a history where a summary replaced followed messages, goes on as if it never stopped", async () => {
    const messages = await transcriptMessages(SOUND_RECORDER_SESSION);
    const split = messages.length - 40;
    const first = tracked(messages.slice(0, split));
    // The store's history: 20 messages inside the followed window replaced by their summary.
    const summary: Message = { ...messages[split - 30]!, id: "summary-1", kind: "summary" };
    const stored = [...messages.slice(0, split - 30), summary, ...messages.slice(split - 10, split)];
    const live = tracked(messages).counts();
    const storedById = new Map(stored.map((message) => [message.id, message]));
    const originalsById = new Map(messages.map((message) => [message.id, message]));
    // Given the stored messages the summary replaced, exactly as if it never stopped.
    const resumed = SessionReuse.resume(
      first.counts(),
      stored,
      stored.length,
      (id) => storedById.get(id) ?? originalsById.get(id),
    );
    for (const message of messages.slice(split)) resumed.observe(message);
    expect(resumed.counts()).toEqual(live);
    // Without them, every piece keeps its age (the replaced messages only stop holding what they held).
    const partial = SessionReuse.resume(first.counts(), stored, stored.length, (id) => storedById.get(id));
    for (const message of messages.slice(split)) partial.observe(message);
    expect(partial.counts().alive).toEqual(live.alive);
    expect(partial.counts().replies).toBe(live.replies);
  });

  it("leaves a piece too large to read out of the count (it could never count as used)", () => {
    const lines = fileLines("huge", 9_000);
    const messages = new HistoryBuilder()
      .user("look at the dump")
      .step([{ name: "Read", input: { file_path: "dump.ts" }, output: lines.join("\n") }])
      .step([
        {
          name: "Edit",
          input: { file_path: "dump.ts", old_string: lines[7]!.trim(), new_string: "x" },
          output: "ok",
        },
      ])
      .build();
    expect(messages[2]!.content.length).toBeGreaterThan(0);
    const counts = tracked(messages).counts();
    expect(counts.alive.read.every((alive) => alive === 0)).toBe(true);
    expect(counts.used.read.every((used) => used === 0)).toBe(true);
    expect(counts.replies).toBe(2);
    // The same edit after a read of indexable size is counted.
    expect(tracked(editsFromOldReads(1, 0)).counts().used.read[0]).toBe(1);
  });
});
