import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  countAnthropicBreakpoints,
  type AnthropicCacheableRequest,
} from "../formats/providers/anthropic/index.ts";
import type { ReplayTotals } from "./replay.ts";
import { describe, expect, it } from "vitest";
import { transcriptFiles, transcriptName } from "../../test/support/transcripts.ts";
import { runCli } from "../cli/main.ts";
import { fromOpenAIChat } from "../formats/providers/index.ts";
import { importTranscriptFile } from "../formats/transcripts/index.ts";
import { RetentionTracker } from "../metrics/index.ts";
import { pairToolCalls } from "../model/tool-pairing.ts";
import { createExtractiveSummarizer } from "../summarize/index.ts";
import { estimatorForModel } from "../tokens/index.ts";
import { recordedFixedTokens, replayableMessages, replayConversation, requestPoints } from "./replay.ts";

// Issue "Context governance", done when: replaying every transcript with a 200k and a 32k window keeps every
// request inside the window, with no orphan tool call or result in any governed request.
describe("replay over every transcript in ../shared/data/transcripts", () => {
  // One test per transcript: the long sessions each get their own time budget, and a failure names its file.
  for (const window of [200_000, 32_000]) {
    describe(`inside a ${window}-token window`, () => {
      const counter = estimatorForModel("claude-sonnet-4-5");
      const seen = { requests: 0, compactions: 0 };
      for (const file of transcriptFiles) {
        it(`${transcriptName(file)}: every request fits, with no orphan`, async () => {
          for (const conversation of await importTranscriptFile(file)) {
            // The window is the test's, not the agent's: a system prompt and tools above a quarter of it are left
            // out (as the bench's policy runs do), since no governance of the history could make them fit.
            const messages = replayableMessages(conversation.messages);
            const fixedTokens = recordedFixedTokens(
              messages,
              requestPoints(messages),
              (message) => counter.countMessage(message),
              window - 8_192,
            );
            const { totals } = await replayConversation(conversation.messages, {
              contextWindow: window,
              maxOutputTokens: 8_192,
              fixedTokens,
              counter,
              summarizer: createExtractiveSummarizer({ counter }),
              retention: new RetentionTracker(),
              onRequest: (_index, view) => {
                const { pairs, orphanResults } = pairToolCalls(view);
                if (orphanResults.length > 0 || pairs.some((pair) => pair.result === undefined)) {
                  throw new Error(`orphan in ${transcriptName(file)} ${conversation.id}`);
                }
              },
            });
            expect(totals.refused, `${transcriptName(file)} ${conversation.id}`).toBe(0);
            expect(totals.maxGovernedTokens + Math.min(8_192, window / 4)).toBeLessThanOrEqual(window);
            expect(totals.retention).toBeGreaterThan(0);
            seen.requests += totals.requests;
            seen.compactions += totals.compactions;
          }
        });
      }
      it("replayed the whole corpus", () => {
        expect(seen.requests).toBeGreaterThan(2_000);
        if (window === 32_000) expect(seen.compactions).toBeGreaterThan(0);
      });
    });
  }

  it("ctxkit replay --json --dump writes governed requests (OpenAI chat, and Anthropic with at most 4 breakpoints), each without orphans", async () => {
    const dir = await mkdtemp(join(tmpdir(), "ctxkit-dump-"));
    try {
      const file = transcriptFiles.find((path) => path.includes("codex/rollout-2026-05-11T11-26-55"))!;
      const output: string[] = [];
      const sink = { write: (chunk: string) => output.push(chunk) !== 0 };
      const code = await runCli(
        ["replay", file, "--window", "32000", "--json", "--dump", dir, "--dump-provider", "anthropic"],
        {
          stdout: sink as never,
          stderr: sink as never,
          env: {},
        },
      );
      expect(code).toBe(0);
      const report = JSON.parse(output.join("")) as {
        requests: unknown[];
        totals: Pick<
          ReplayTotals,
          | "costUnits"
          | "summarizerCostUnits"
          | "rereadCostUnits"
          | "costWithRereads"
          | "grounding"
          | "cacheModel"
        >;
      };
      for (const key of [
        "requests",
        "rawInputTokens",
        "governedInputTokens",
        "cachedInputTokens",
        "costUnits",
        "rawCostUnits",
        "maxGovernedTokens",
        "compactions",
        "retention",
        "summarizerCostUnits",
        "rereadCostUnits",
        "costWithRereads",
        "grounding",
        "anchorsKept",
      ]) {
        expect(report.totals).toHaveProperty(key);
      }
      const { totals } = report;
      expect(totals.costWithRereads).toBeCloseTo(
        totals.costUnits + totals.summarizerCostUnits + totals.rereadCostUnits,
      );
      expect(totals.grounding).toBeGreaterThan(0);
      expect(totals.grounding).toBeLessThanOrEqual(1);
      // A Codex session is priced as its own provider (OpenAI) bills it.
      expect(totals.cacheModel.provider).toBe("openai");
      const dumps = (await readdir(dir)).filter((name) => /^request-\d+\.json$/.test(name));
      expect(dumps).toHaveLength(report.requests.length);
      const anthropicDumps = (await readdir(dir)).filter((name) =>
        /^request-\d+\.anthropic\.json$/.test(name),
      );
      expect(anthropicDumps).toHaveLength(report.requests.length);
      for (const name of anthropicDumps) {
        const payload = JSON.parse(await readFile(join(dir, name), "utf8")) as AnthropicCacheableRequest;
        expect(countAnthropicBreakpoints(payload)).toBeGreaterThan(0);
        expect(countAnthropicBreakpoints(payload)).toBeLessThanOrEqual(4);
      }
      for (const name of dumps) {
        const body = JSON.parse(await readFile(join(dir, name), "utf8")) as {
          index: number;
          messages: unknown;
        };
        expect(name).toBe(`request-${body.index}.json`);
        const { pairs, orphanResults } = pairToolCalls(fromOpenAIChat(body.messages));
        expect(orphanResults).toEqual([]);
        expect(pairs.every((pair) => pair.result !== undefined)).toBe(true);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
