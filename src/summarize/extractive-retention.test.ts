import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { importTranscriptFile } from "../formats/transcripts/index.ts";
import { outputKind } from "../metrics/context-kind.ts";
import { normalizeFact } from "../metrics/fact-patterns.ts";
import { messageFacts } from "../metrics/facts.ts";
import { toolCallsOf } from "../model/blocks.ts";
import { scoreRetention } from "../metrics/retention.ts";
import type { Message, ToolCallBlock } from "../model/message.ts";
import { isFailedResult, touchedPaths } from "./history-digest.ts";
import { createExtractiveSummarizer, charEstimateCounter } from "./extractive-summarizer.ts";

/** Real sessions of four agents (see shared/data/transcripts/FORMATS.md). */
const TRANSCRIPTS = [
  "claude-code__daaain-claude-code-log/-Users-dain-workspace-danieldemmel-me-next/9e953218-585f-4692-89df-9e0747a31c68.jsonl",
  "claude-code__daaain-claude-code-log/-src-deep-manifest/a7da6a22-facc-4fcd-8bab-f83c87862004.jsonl",
  "claude-code__marot-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
  "codemie-code/claude-code/session-196820da.jsonl",
  "codemie-code/codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
  "codemie-code/gemini-cli/session-2025-12-01T21-45-5b959dae.json",
];
const RANGE_MESSAGES = 150;
/** The summary may use a tenth of the range's tokens. */
const BUDGET_SHARE = 0.1;

const transcriptsRoot = fileURLToPath(new URL("../../../shared/data/transcripts/", import.meta.url));

interface Case {
  readonly name: string;
  readonly range: readonly Message[];
  readonly facts: ReadonlySet<string>;
  readonly budget: number;
}

const cases: Case[] = [];
const summarizer = createExtractiveSummarizer();

beforeAll(async () => {
  for (const path of TRANSCRIPTS) {
    const [conversation] = await importTranscriptFile(`${transcriptsRoot}${path}`);
    const range = conversation!.messages
      .filter((message) => message.kind === undefined)
      .slice(0, RANGE_MESSAGES);
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
    const scores: number[] = [];
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
      expect(retention, name).toBeGreaterThan(2 * baseline);
      scores.push(retention);
    }
    const mean = scores.reduce((sum, score) => sum + score, 0) / scores.length;
    expect(mean).toBeGreaterThanOrEqual(0.85);
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
    const mean = scores.reduce((sum, score) => sum + score, 0) / scores.length;
    expect(mean).toBeGreaterThanOrEqual(0.85);
  });
});
