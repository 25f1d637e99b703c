import { beforeAll, describe, expect, it } from "vitest";
import { importTranscriptFile } from "../formats/transcripts/index.ts";
import { transcriptFiles, transcriptName } from "../../test/support/transcripts.ts";
import { outputKind } from "../metrics/context-kind.ts";
import { normalizeFact } from "../metrics/fact-patterns.ts";
import { messageFacts } from "../metrics/facts.ts";
import { toolCallsOf } from "../model/blocks.ts";
import { scoreRetention } from "../metrics/retention.ts";
import type { Message, ToolCallBlock } from "../model/message.ts";
import { isFailedResult, touchedPaths } from "./history-digest.ts";
import { createExtractiveSummarizer, charEstimateCounter } from "./extractive-summarizer.ts";

const RANGE_MESSAGES = 150;
/** The summary may use a tenth of the range's tokens. */
const BUDGET_SHARE = 0.1;

interface Case {
  readonly name: string;
  readonly range: readonly Message[];
  readonly facts: ReadonlySet<string>;
  readonly budget: number;
}

const cases: Case[] = [];
const summarizer = createExtractiveSummarizer();

beforeAll(async () => {
  // Every main conversation of the corpus long enough to hold a whole range (every agent's long sessions).
  for (const file of transcriptFiles) {
    const [conversation] = await importTranscriptFile(file);
    if (conversation === undefined || conversation.sidechain === true) continue;
    const visible = conversation.messages.filter((message) => message.kind === undefined);
    if (visible.length < RANGE_MESSAGES) continue;
    const range = visible.slice(0, RANGE_MESSAGES);
    const path = transcriptName(file);
    const facts = factsOfTheWork(range);
    const rangeTokens = charEstimateCounter.countText(range.map(renderPlain).join("\n"));
    cases.push({ name: path, range, facts, budget: Math.max(1_000, Math.round(rangeTokens * BUDGET_SHARE)) });
  }
});

/**
 * The facts a summary must keep (DESIGN.md's retention facts, without the noise a keyword count rewards): what the
 * user wrote; the agent's tool calls and the paths it wrote; the files its tools acted on; the error lines that
 * commands and other tools reported. Paths and "error" lines that only appear inside a file's text or a listing
 * (fixtures, example paths, `grep -n` context) are not facts of the work.
 */
function factsOfTheWork(range: readonly Message[]): Set<string> {
  const calls = new Map<string, ToolCallBlock>();
  const facts = new Set<string>();
  for (const message of range) {
    for (const block of message.content) if (block.type === "tool-call") calls.set(block.id, block);
    for (const call of toolCallsOf(message))
      for (const path of touchedPaths(call.input)) facts.add(normalizeFact(path));
    for (const fact of messageFacts(message)) {
      if (message.role === "user") facts.add(fact.key);
      else if (message.role === "assistant" && fact.kind !== "error-line") facts.add(fact.key);
      else if (message.role === "tool" && fact.kind === "error-line") {
        const reported = message.content.some((block) => {
          if (block.type !== "tool-result") return false;
          const call = calls.get(block.callId);
          return isFailedResult(block) || call === undefined || ["shell", "other"].includes(outputKind(call));
        });
        if (reported) facts.add(fact.key);
      }
    }
  }
  return facts;
}

/** The range as raw text, for the baseline: keep the start of the transcript up to the budget. */
function renderPlain(message: Message): string {
  return `${message.role}: ${JSON.stringify(message.content)}`;
}

describe("extractive summaries of real transcripts", () => {
  it("keep most facts of the range within a tenth of its tokens, far more than keeping its start", async () => {
    expect(cases.length).toBeGreaterThanOrEqual(10);
    const scores: number[] = [];
    const baselines: number[] = [];
    for (const { name, range, facts, budget } of cases) {
      expect(facts.size, name).toBeGreaterThan(10);
      const summary = await summarizer.summarize({ messages: range, maxTokens: budget });
      expect(charEstimateCounter.countText(summary), name).toBeLessThanOrEqual(budget);
      const retention = scoreRetention(facts, summary);
      const baseline = scoreRetention(
        facts,
        range
          .map(renderPlain)
          .join("\n")
          .slice(0, budget * 4),
      );
      expect(retention, name).toBeGreaterThanOrEqual(0.4);
      // A session whose first messages hold most of its facts (a long prompt listing the work) is the one case
      // where keeping the start is nearly as good.
      expect(retention, name).toBeGreaterThan(baseline);
      scores.push(retention);
      baselines.push(baseline);
    }
    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    expect(mean(scores)).toBeGreaterThanOrEqual(0.85);
    expect(mean(scores)).toBeGreaterThan(2 * mean(baselines));
  });

  it("keep them as well when the range is summarised in slices, each merged into the previous summary", async () => {
    const scores: number[] = [];
    for (const { name, range, facts, budget } of cases) {
      let summary: string | undefined;
      for (let start = 0; start < range.length; start += 30) {
        summary = await summarizer.summarize({
          messages: range.slice(start, start + 30),
          maxTokens: budget,
          ...(summary !== undefined && { previousSummary: summary }),
        });
        expect(charEstimateCounter.countText(summary), name).toBeLessThanOrEqual(budget);
      }
      scores.push(scoreRetention(facts, summary!));
    }
    expect(scores.reduce((sum, score) => sum + score, 0) / scores.length).toBeGreaterThanOrEqual(0.85);
  });
});
