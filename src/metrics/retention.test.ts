import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Message } from "../model/message.ts";
import type { RetentionScorer } from "../replay/replay.ts";
import { HistoryBuilder } from "../test/history-builder.ts";
import { messageFacts } from "./facts.ts";
import { RetentionTracker, scoreRetention, viewScoringText } from "./retention.ts";

function summaryOf(messages: readonly Message[], text: string): Message {
  const first = messages[0]!;
  return Object.freeze({
    ...first,
    id: `sum-${first.id}`,
    role: "user",
    kind: "summary",
    content: [{ type: "text" as const, text }],
  });
}

function withText(message: Message, text: string): Message {
  return Object.freeze({ ...message, content: [{ type: "text" as const, text }] });
}

const history = new HistoryBuilder()
  .user("Fix the flaky test in tests/io.test.ts please.")
  .step([{ name: "Read", input: { file_path: "tests/io.test.ts" }, output: "import x from './io.ts'" }])
  .step([
    {
      name: "Bash",
      input: { command: "npm test" },
      output: "FAILED tests/io.test.ts\nError: timeout of 5000ms exceeded",
      isError: true,
    },
  ])
  .reply("The timeout was too short; raised it to 10s in tests/io.test.ts.")
  .user("Now update the changelog.")
  .build();

describe("scoreRetention", () => {
  it("is the share of facts present as substrings, case and whitespace insensitive", () => {
    const atStake = new Set(["src/a.ts", "read(src/b.ts)", "error: boom"]);
    expect(scoreRetention(atStake, "Files: SRC/a.ts\nErrors:   Error:\n boom")).toBeCloseTo(2 / 3);
    expect(scoreRetention(atStake, "")).toBe(0);
  });

  it("is 1 when nothing is at stake", () => {
    expect(scoreRetention(new Set(), "anything")).toBe(1);
  });

  it("does not match a fact across two messages of a view", () => {
    const [first, second] = [withText(history[0]!, "…src/a"), withText(history[1]!, ".ts…")];
    expect(scoreRetention(new Set(["src/a.ts"]), [first, second])).toBe(0);
  });
});

describe("RetentionTracker", () => {
  it("has nothing at stake while the view is the history", () => {
    const tracker = new RetentionTracker();
    const observation = tracker.observe(history, history);
    expect(observation).toEqual({ atStake: 0, retained: 0, score: undefined });
    expect(tracker.missing()).toEqual([]);
    expect(tracker.mean()).toBe(1);
    expect(tracker.scoredRequests).toBe(0);
  });

  it("puts at stake the facts first seen in removed messages and finds them in a summary", () => {
    const tracker = new RetentionTracker();
    const removed = history.slice(0, 5);
    const summary = summaryOf(
      removed,
      "User: Fix the flaky test in tests/io.test.ts please.\nRead(tests/io.test.ts), Bash(npm test)",
    );
    const observation = tracker.observe(history, [summary, ...history.slice(5)]);
    const atStake = removed.flatMap((message) => messageFacts(message).map((fact) => fact.key));
    expect(observation.atStake).toBe(new Set(atStake).size);
    expect(tracker.missing().sort()).toEqual(
      ["./io.ts", "failed tests/io.test.ts", "error: timeout of 5000ms exceeded"].sort(),
    );
    expect(observation.score).toBeCloseTo((observation.atStake - 3) / observation.atStake);
  });

  it("a fact first seen in a kept message is not at stake even if a later copy was removed", () => {
    const tracker = new RetentionTracker();
    // Drop only the tool result; its path was first seen in the (kept) user instruction.
    const view = history.filter((message) => message.id !== history[2]!.id);
    const observation = tracker.observe(history, view);
    expect(tracker.missing()).toEqual(["./io.ts"]);
    expect(observation.atStake).toBe(1);
  });

  it("counts a message whose content changed as changed, and an identical copy as unchanged", () => {
    const tracker = new RetentionTracker();
    const copy = Object.freeze({
      ...history[4]!,
      content: history[4]!.content.map((block) => ({ ...block })),
    });
    const truncated = withText(history[4]!, "[output truncated]");
    expect(tracker.observe(history, history.with(4, copy)).atStake).toBe(0);
    tracker.observe(history, history.with(4, truncated));
    expect(tracker.missing()).toEqual(["failed tests/io.test.ts", "error: timeout of 5000ms exceeded"]);
  });

  it("averages only the requests that had facts at stake", () => {
    const tracker = new RetentionTracker();
    tracker.observe(history.slice(0, 3), history.slice(0, 3));
    tracker.observe(history, history.slice(1));
    tracker.observe(history, [withText(history[0]!, "x"), ...history.slice(1)]);
    expect(tracker.requests).toBe(3);
    expect(tracker.scoredRequests).toBe(2);
    // Request 2 lost the instruction message, request 3 changed it; its path survives in later messages.
    expect(tracker.mean()).toBeCloseTo(1 / 2);
  });

  it("between checkpoints finds a lost fact again when a newer message brings it back", () => {
    const tracker = new RetentionTracker();
    const summary = summaryOf(history.slice(0, 5), "Earlier: a flaky test was investigated.");
    const view = [summary, ...history.slice(5)];
    const first = tracker.observe(history, view);
    expect(tracker.missing()).toContain("./io.ts");
    const later = new HistoryBuilder().user("Also check ./io.ts for the same bug.").build()[0]!;
    const grown = [...history, { ...later, id: "later", seq: 99 }];
    const second = tracker.observe(grown, [...view, grown.at(-1)!]);
    expect(tracker.missing()).not.toContain("./io.ts");
    expect(second.retained).toBe(first.retained + 1);
  });

  it("visits a bounded number of history messages per request however long the history grows", () => {
    const turns = new HistoryBuilder();
    for (let turn = 0; turn < 700; turn++)
      turns
        .user(`Task ${turn}: fix src/area${turn}/main.ts today.`)
        .step([
          {
            name: "Read",
            input: { file_path: `src/area${turn}/main.ts` },
            output: `Error: case ${turn} failed in lib/part${turn}.js`,
          },
        ])
        .reply(`Fixed task ${turn}.`);
    const messages = turns.build();
    /** History elements the tracker read during the last 100 requests of a replay of `length` messages. */
    const visitsAt = (length: number): number => {
      const tracker = new RetentionTracker();
      let visits = 0;
      let view: Message[] = [];
      for (let end = 1; end <= length; end++) {
        const history = messages.slice(0, end);
        // A governor that keeps the newest 40 messages and summarises the rest when the view passes 60.
        view = [...view, history.at(-1)!];
        if (view.length > 60)
          view = [summaryOf(history, `Earlier: src/area${end % 7}/main.ts`), ...history.slice(-40)];
        const counted = new Proxy(history, {
          get(target, property, receiver) {
            if (typeof property === "string" && /^\d+$/.test(property) && end > length - 100) visits++;
            return Reflect.get(target, property, receiver) as unknown;
          },
        });
        tracker.observe(counted, view);
      }
      expect(tracker.scoredRequests).toBeGreaterThan(0);
      return visits;
    };
    const short = visitsAt(500);
    const long = visitsAt(2_000);
    expect(short).toBeGreaterThanOrEqual(100);
    expect(long / short).toBeLessThan(1.5);
  });

  it("satisfies replay's RetentionScorer", () => {
    const scorer: RetentionScorer = new RetentionTracker();
    scorer.observe(history, history);
    expect(scorer.mean()).toBe(1);
  });

  it("gives the same scores as a from-scratch computation over any sequence of views (property)", () => {
    const long = new HistoryBuilder();
    for (let turn = 0; turn < 6; turn++) {
      long
        .user(`Task ${turn}: update src/module${turn}.ts and keep tests green.`)
        .step([
          {
            name: "Read",
            input: { file_path: `src/module${turn}.ts` },
            output: `export const v${turn} = ${turn};\n// see lib/helper${turn}.js`,
          },
        ])
        .step([
          { name: "Bash", input: { command: `npm test -- ${turn}` }, output: `Error: case ${turn} failed` },
        ])
        .reply(`Done with task ${turn}.`);
    }
    const messages = long.build();
    const request = fc.record({
      length: fc.integer({ min: 1, max: messages.length }),
      removed: fc.uniqueArray(fc.nat(messages.length - 1), { maxLength: 8 }),
      changed: fc.uniqueArray(fc.nat(messages.length - 1), { maxLength: 4 }),
      summaryText: fc.constantFrom("", "src/module0.ts Read(src/module1.ts) error: case 2 failed"),
    });
    fc.assert(
      fc.property(fc.array(request, { minLength: 1, maxLength: 8 }), (requests) => {
        const tracker = new RetentionTracker();
        const expectedScores: number[] = [];
        for (const { length, removed, changed, summaryText } of requests) {
          const historySoFar = messages.slice(0, length);
          const view = historySoFar
            .filter((_, index) => !removed.includes(index))
            .map((message) => (changed.includes(message.seq) ? withText(message, "[cleared]") : message));
          if (summaryText) view.unshift(summaryOf(historySoFar, summaryText));
          const observation = tracker.observe(historySoFar, view);
          const expected = naiveAtStake(historySoFar, view);
          expect(observation.atStake).toBe(expected.size);
          const viewText = viewScoringText(view);
          expect(tracker.missing().sort()).toEqual(
            [...expected].filter((key) => !viewText.includes(key)).sort(),
          );
          if (expected.size > 0) {
            expect(observation.score).toBeCloseTo(scoreRetention(expected, view));
            expectedScores.push(scoreRetention(expected, view));
          }
        }
        const mean = expectedScores.length
          ? expectedScores.reduce((sum, score) => sum + score, 0) / expectedScores.length
          : 1;
        expect(tracker.mean()).toBeCloseTo(mean);
      }),
      { numRuns: 150 },
    );
  });
});

/** The definition, computed from scratch: facts first seen in messages missing from or changed in the view. */
function naiveAtStake(history: readonly Message[], view: readonly Message[]): Set<string> {
  const seen = new Set<string>();
  const atStake = new Set<string>();
  for (const message of history) {
    const sent = view.find((candidate) => candidate.id === message.id);
    const changed = sent === undefined || JSON.stringify(sent.content) !== JSON.stringify(message.content);
    for (const fact of messageFacts(message)) {
      if (seen.has(fact.key)) continue;
      seen.add(fact.key);
      if (changed) atStake.add(fact.key);
    }
  }
  return atStake;
}
