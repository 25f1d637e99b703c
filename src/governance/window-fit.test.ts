import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { repairOrphans } from "../conversation/orphan-repair.ts";
import { ContextOverflowError } from "../errors/errors.ts";
import type { Message } from "../model/message.ts";
import { pairToolCalls } from "../model/tool-pairing.ts";
import { currentTurnStart } from "../model/turns.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { createGovernor } from "./governor.ts";
import { preset } from "./presets.ts";
import { agentTurn, buildAgentHistory } from "../test/agent-history.test-helpers.ts";

/**
 * The smallest a newest-step result may be cut to when nothing else makes the request fit (`fitNewestStep`):
 * 200 tokens of its text, plus the omission notice and the tool name.
 */
const SMALLEST_RESULT = 220;

/** What the agent must be able to send: the current instruction and the newest step, its results cut as allowed. */
function protectedTokens(prefix: readonly Message[], counter: FakeTokenCounter): number {
  const start = currentTurnStart(prefix);
  const newestStep = prefix.findLastIndex((message) => message.role === "assistant");
  const part = newestStep > start ? [prefix[start]!, ...prefix.slice(newestStep)] : [prefix[start]!];
  return repairOrphans(part).messages.reduce((sum, message) => {
    const tokens = counter.countMessage(message);
    return sum + (message.role === "tool" ? Math.min(tokens, SMALLEST_RESULT) : tokens);
  }, 0);
}

/**
 * One session: a few turns (sizes are small so that 10,000 sessions run in seconds; what matters is how they
 * compare with the window), the model's window and output reserve, the system prompt and tools, the preset.
 */
const scenario = fc.record({
  turns: fc.array(
    agentTurn({ maxOutputChars: 8_000, maxWrittenChars: 4_000, maxSteps: 5, interrupted: true }),
    { minLength: 1, maxLength: 3 },
  ),
  contextWindow: fc.integer({ min: 3_000, max: 16_000 }),
  reserved: fc.integer({ min: 200, max: 4_000 }),
  fixedTokens: fc.integer({ min: 0, max: 1_500 }),
  preset: fc.constantFrom("default", "aggressive", "minimal"),
});

describe("every request fits the window by the provider's count (property, 10,000 histories)", () => {
  // The provider counts `ratio` × what the local counter counts of the payload sent, and reports it after
  // each request. Ratios are multiples of 1/64, so `ratio × tokens` is exact in floating point and no
  // assertion needs a rounding tolerance.
  for (const [label, ratios] of [
    ["the provider counts fewer tokens (0.5 to 1)", fc.integer({ min: 32, max: 63 })],
    ["the provider counts more tokens (1 to 2)", fc.integer({ min: 64, max: 128 })],
  ] as const) {
    it(`when ${label}`, async () => {
      const seen = { requests: 0, refused: 0, checkpoints: 0, dropped: 0, notices: 0, repaired: 0 };
      await fc.assert(
        fc.asyncProperty(scenario, ratios, async (input, sixtyFourths) => {
          const ratio = sixtyFourths / 64;
          const { history, requestAt } = buildAgentHistory(input.turns);
          const contextWindow = Math.max(input.contextWindow, 4 * input.reserved);
          const governor = createGovernor({
            contextWindow,
            reservedOutputTokens: input.reserved,
            counter: new FakeTokenCounter(),
            summarizer: new FakeSummarizer(),
            pipeline: preset(input.preset),
          });
          const counter = new FakeTokenCounter();
          let reported = false;
          // The count governance may go by: the local one until the provider reported; then the provider's,
          // but never under 90% of the local one (the documented limit on relaxing on the provider's word).
          const trusted = (local: number) => (reported ? Math.max(ratio * local, (9 * local) / 10) : local);
          for (const end of requestAt) {
            const prefix = history.slice(0, end);
            let request;
            try {
              request = await governor.prepare(prefix, { fixedTokens: input.fixedTokens });
            } catch (error) {
              expect(error).toBeInstanceOf(ContextOverflowError);
              // Refused only when not even the protected part could fit.
              const protectedPart = trusted(input.fixedTokens + protectedTokens(prefix, counter));
              expect(protectedPart + input.reserved).toBeGreaterThan(contextWindow);
              seen.refused++;
              continue;
            }
            seen.requests++;
            if (request.checkpoint) seen.checkpoints++;
            for (const event of request.events) {
              if (event.type === "overflow-prevented" && event.messageIds.length > 0) seen.dropped++;
              if (event.type === "budget-exit-notice") seen.notices++;
              if (event.type === "orphans-repaired") seen.repaired++;
            }
            const sent = request.messages;
            const local =
              input.fixedTokens + sent.reduce((sum, message) => sum + counter.countMessage(message), 0);
            expect(request.tokens.total).toBe(local);
            // Within the window, by the provider's count once it reported (and by what governance trusts).
            if (reported) expect(ratio * local + input.reserved).toBeLessThanOrEqual(contextWindow);
            expect(trusted(local) + input.reserved).toBeLessThanOrEqual(contextWindow);
            // Tool calls and results paired; the current instruction verbatim.
            const { pairs, orphanResults } = pairToolCalls(sent);
            expect(orphanResults).toEqual([]);
            expect(pairs.every((pair) => pair.result !== undefined)).toBe(true);
            expect(sent).toContainEqual(prefix[currentTurnStart(prefix)]);
            governor.observeUsage(request.tokens, ratio * local);
            reported = true;
          }
        }),
        { numRuns: 5_000 },
      );
      console.log(label, seen);
      // Every path was exercised: checkpoints, last-resort drops, refusals, notices, orphan repair.
      expect(seen.checkpoints).toBeGreaterThan(seen.requests / 20);
      for (const count of [seen.dropped, seen.refused, seen.notices, seen.repaired])
        expect(count).toBeGreaterThan(0);
      // 10,000 sessions whose every message governance reads for what the agent uses again (`SessionReuse`):
      // about 25 s alone, longer beside the rest of the suite on 2 cores.
    }, 180_000);
  }
});
