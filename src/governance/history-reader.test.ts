import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ConversationSnapshot } from "../conversation/snapshot.ts";
import { sequentialIds } from "../model/ids.ts";
import { agentTurn, buildAgentHistory } from "../test/agent-history.test-helpers.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { createGovernor, type GovernedRequest } from "./governor.ts";

const governorFor = (contextWindow: number) =>
  createGovernor({
    contextWindow,
    reservedOutputTokens: 2_000,
    counter: new FakeTokenCounter(),
    summarizer: new FakeSummarizer(),
    ids: sequentialIds(),
    clock: () => new Date("2026-01-01T00:00:00Z"),
  });

/** What a request came to: the governed request's substance, or the error's name. */
function outcome(result: unknown) {
  if (result instanceof Error) return { error: result.name };
  const { messages, tokens, checkpoint, events } = result as GovernedRequest;
  return { messages, tokens, checkpoint, events: events.map((event) => event.type) };
}

describe("Governor.prepare with a HistoryReader", () => {
  it("governs a snapshot of the history exactly as the same history given as an array", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(agentTurn(), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 12_000, max: 60_000 }),
        async (turns, contextWindow) => {
          const { history, requestAt } = buildAgentHistory(turns);
          const fromArray = governorFor(contextWindow);
          const fromSnapshot = governorFor(contextWindow);
          for (const end of requestAt) {
            // The snapshot shares the whole history and only remembers its length, as a conversation's does.
            const snapshot = new ConversationSnapshot(history, end, end);
            const expected = await fromArray.prepare(history.slice(0, end)).catch((error: unknown) => error);
            const actual = await fromSnapshot.prepare(snapshot).catch((error: unknown) => error);
            expect(outcome(actual)).toEqual(outcome(expected));
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
