import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { repairOrphans } from "../conversation/orphan-repair.ts";
import { ContextOverflowError } from "../errors/errors.ts";
import type { Message } from "../model/message.ts";
import { toolCallLabel } from "../metrics/tool-call-label.ts";
import { pairToolCalls } from "../model/tool-pairing.ts";
import { opensTurn } from "../model/turns.ts";
import { FakeSummarizer } from "../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../test/fake-token-counter.ts";
import { createGovernor } from "./governor.ts";
import { presetNames, preset } from "./presets.ts";
import { agentTurn, buildAgentHistory } from "../test/agent-history.test-helpers.ts";

const withoutNotices = (messages: readonly Message[]) =>
  messages.filter((message) => message.metadata?.["notice"] === undefined);

describe("governance invariants (property tests over random histories)", () => {
  for (const name of presetNames) {
    it(`hold for the ${name} preset`, async () => {
      const seen = { requests: 0, refused: 0, checkpoints: 0, summaries: 0, elisions: 0 };
      await fc.assert(
        fc.asyncProperty(
          fc.array(agentTurn(), { minLength: 1, maxLength: 8 }),
          fc.integer({ min: 12_000, max: 60_000 }),
          async (turns, contextWindow) => {
            const { history, requestAt } = buildAgentHistory(turns);
            const governor = createGovernor({
              contextWindow,
              reservedOutputTokens: 2_000,
              counter: new FakeTokenCounter(),
              summarizer: new FakeSummarizer(),
              pipeline: preset(name),
            });
            let previousView: readonly Message[] = [];
            for (const end of requestAt) {
              const prefix = history.slice(0, end);
              let request;
              try {
                request = await governor.prepare(prefix);
              } catch (error) {
                // Only allowed when the protected part alone cannot fit.
                expect(error).toBeInstanceOf(ContextOverflowError);
                expect(name).not.toBe("off");
                seen.refused++;
                previousView = governor.view;
                continue;
              }
              const view = request.messages;
              seen.requests++;
              if (request.checkpoint) seen.checkpoints++;
              if (view.some((message) => message.kind === "summary")) seen.summaries++;
              if (request.events.some((event) => event.type === "tool-inputs-elided")) seen.elisions++;
              const instructionIndex = prefix.findLastIndex(opensTurn);
              const lastAssistant = prefix.findLastIndex((message) => message.role === "assistant");
              // 1. The current instruction and the newest step are intact.
              expect(view).toContainEqual(prefix[instructionIndex]);
              // (Documented exception: when even a forced compaction cannot make room, the newest step's results
              // are capped to fit — with an event naming them — rather than refusing the request.)
              const capped = new Set(
                request.events.flatMap((event) =>
                  event.type === "tool-output-capped" ? event.messageIds : [],
                ),
              );
              if (lastAssistant > instructionIndex) {
                for (const message of prefix.slice(lastAssistant)) {
                  if (!capped.has(message.id)) expect(view).toContainEqual(message);
                }
              }
              // 2. No orphan tool call or result.
              const { pairs, orphanResults } = pairToolCalls(view);
              expect(orphanResults).toEqual([]);
              expect(pairs.every((pair) => pair.result !== undefined)).toBe(true);
              expect(repairOrphans(view).messages).toBe(view);
              // 2b. Every tool call keeps its id, name and label (what it acted on).
              const original = new Map(
                prefix
                  .flatMap((message) => message.content)
                  .flatMap((block) => (block.type === "tool-call" ? [[block.id, block] as const] : [])),
              );
              for (const block of view.flatMap((message) => message.content)) {
                if (block.type !== "tool-call") continue;
                const before = original.get(block.id);
                expect(before?.name).toBe(block.name);
                expect(toolCallLabel(block)).toBe(toolCallLabel(before!));
              }
              // 3. Chronology: positions strictly increase; the last message is what the model must answer.
              const seqs = withoutNotices(view).map((message) => message.seq);
              expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
              expect(new Set(seqs).size).toBe(seqs.length);
              expect(withoutNotices(view).at(-1)!.id).toBe(prefix.at(-1)!.id);
              if (!capped.has(prefix.at(-1)!.id)) expect(withoutNotices(view).at(-1)).toEqual(prefix.at(-1));
              // 4. The payload fits whenever governance is on.
              if (name !== "off")
                expect(request.tokens.total + request.tokens.reservedOutput).toBeLessThanOrEqual(
                  contextWindow,
                );
              // 5. Between checkpoints the view only grows at its end, byte for byte.
              const current = withoutNotices(view);
              if (!request.checkpoint) {
                expect(JSON.stringify(current.slice(0, previousView.length))).toBe(
                  JSON.stringify(previousView),
                );
              }
              previousView = governor.view;
            }
          },
        ),
        { numRuns: 60 },
      );
      // The properties must have been exercised: governance acted, and refusals stayed exceptional.
      console.log(name, seen);
      expect(seen.refused).toBeLessThan(seen.requests / 20);
      if (name !== "off") expect(seen.summaries).toBeGreaterThan(0);
      else expect(seen.checkpoints).toBe(0);
      if (name === "default" || name === "aggressive") expect(seen.elisions).toBeGreaterThan(0);
      else expect(seen.elisions).toBe(0);
    });
  }
});
