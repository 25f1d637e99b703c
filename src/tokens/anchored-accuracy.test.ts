import { describe, expect, it } from "vitest";
import { importTranscriptFile, type ImportedConversation } from "../formats/transcripts/index.ts";
import type { Message } from "../model/message.ts";
import { AnchoredTokenAccount } from "./anchored-token-account.ts";
import { counterForModel } from "./counter-for-model.ts";
import { createEstimatingCounter } from "./estimating-counter.ts";
import type { TokenCounter } from "./token-counter.ts";
import { transcriptFilesOf } from "../../test/support/transcripts.ts";

/**
 * Replays real agent sessions request by request. Before each request the account predicts its prompt
 * tokens from the previous request's reported count plus the estimate of what was added since (the
 * previous reply and the tool results or user messages after it); the provider's reported count is then
 * observed. Claude Code transcripts lack the system prompt and tool schemas, which is exactly what anchoring
 * absorbs; Codex transcripts carry them but its reasoning is encrypted.
 */
async function load(format: "claude-code" | "codex"): Promise<ImportedConversation[]> {
  const files = transcriptFilesOf(format);
  return (await Promise.all(files.map((file) => importTranscriptFile(file)))).flat();
}

interface ReplayResult {
  /** |estimated growth − real growth| / real growth, per anchored request with real growth > 0. */
  readonly growthErrors: number[];
  /** |estimated total − real total| / real total for the same requests. */
  readonly totalErrors: number[];
  /**
   * The same totals predicted by the estimator alone: the whole payload's estimate plus the unseen part
   * (system prompt, tools) measured once, at the conversation's first request.
   */
  readonly unanchoredErrors: number[];
}

type CounterChoice = (model: string) => Promise<TokenCounter>;

async function replay(
  conversations: readonly ImportedConversation[],
  counterFor: CounterChoice,
  learn: boolean,
): Promise<ReplayResult> {
  const result: ReplayResult = { growthErrors: [], totalErrors: [], unanchoredErrors: [] };
  for (const conversation of conversations) {
    const model = conversation.messages.find((message) => message.model !== undefined)?.model ?? "unknown";
    const account = new AnchoredTokenAccount({ counter: await counterFor(model), learn });
    let view: Message[] = [];
    let previous: number | undefined;
    let unseen: number | undefined;
    for (const message of conversation.messages) {
      if (message.kind === "marker") {
        // After a compaction the model sees the summary and what follows, not the old history.
        if (message.metadata?.["subtype"] === "compact_boundary") view = [];
        continue;
      }
      const reported = message.role === "assistant" ? message.usage?.input : undefined;
      if (reported !== undefined && reported > 0) {
        const payload = { messages: view };
        const estimate = account.estimate(payload);
        if (previous !== undefined && estimate.basis === "anchored" && reported > previous) {
          const realGrowth = reported - previous;
          result.growthErrors.push(Math.abs(estimate.total - previous - realGrowth) / realGrowth);
          result.totalErrors.push(Math.abs(estimate.total - reported) / reported);
          const unanchored = estimate.estimatedTotal + (unseen ?? 0);
          result.unanchoredErrors.push(Math.abs(unanchored - reported) / reported);
        }
        unseen ??= reported - estimate.estimatedTotal;
        account.observe(payload, reported);
        previous = reported;
      }
      view = [...view, message];
    }
  }
  return result;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const percent = (value: number, digits = 1) => `${(value * 100).toFixed(digits)}%`;

const familyCounter: CounterChoice = (model) => counterForModel(model);
const genericCounter: CounterChoice = async () => createEstimatingCounter({ family: "generic" });

async function measure(label: string, conversations: readonly ImportedConversation[]) {
  const family = await replay(conversations, familyCounter, false);
  const familyCalibrated = await replay(conversations, familyCounter, true);
  const generic = await replay(conversations, genericCounter, false);
  const genericCalibrated = await replay(conversations, genericCounter, true);
  console.log(
    [
      `${label}: ${familyCalibrated.growthErrors.length} anchored requests in ${conversations.length} conversations`,
      `  median growth error, model's counter: ${percent(median(family.growthErrors))} uncalibrated, ${percent(median(familyCalibrated.growthErrors))} calibrated`,
      `  median growth error, generic estimator: ${percent(median(generic.growthErrors))} uncalibrated, ${percent(median(genericCalibrated.growthErrors))} calibrated`,
      `  median total error: ${percent(median(familyCalibrated.totalErrors), 2)} anchored, ${percent(median(familyCalibrated.unanchoredErrors), 2)} estimator alone`,
    ].join("\n"),
  );
  return { family, familyCalibrated, generic, genericCalibrated };
}

describe("anchored accounting on real transcripts", () => {
  it("predicts Claude Code request growth within 12% (median), calibration helping where the profile is off", async () => {
    const conversations = await load("claude-code");
    const { family, familyCalibrated, generic, genericCalibrated } = await measure(
      "Claude Code",
      conversations,
    );
    expect(familyCalibrated.growthErrors.length).toBeGreaterThan(500);
    expect(median(familyCalibrated.growthErrors)).toBeLessThan(0.12);
    expect(median(familyCalibrated.growthErrors)).toBeLessThanOrEqual(median(family.growthErrors) + 0.01);
    expect(median(genericCalibrated.growthErrors)).toBeLessThan(median(generic.growthErrors) - 0.02);
    expect(median(familyCalibrated.totalErrors)).toBeLessThan(median(familyCalibrated.unanchoredErrors));
  });

  it("predicts Codex request growth within 5% (median) with the exact o200k counter", async () => {
    const conversations = (await load("codex")).filter((conversation) =>
      conversation.messages.some((message) => message.usage !== undefined),
    );
    const { family, familyCalibrated, generic, genericCalibrated } = await measure("Codex", conversations);
    expect(familyCalibrated.growthErrors.length).toBeGreaterThan(50);
    expect(median(familyCalibrated.growthErrors)).toBeLessThan(0.05);
    expect(median(familyCalibrated.growthErrors)).toBeLessThanOrEqual(median(family.growthErrors) + 0.01);
    expect(median(genericCalibrated.growthErrors)).toBeLessThan(median(generic.growthErrors) - 0.02);
    expect(median(familyCalibrated.totalErrors)).toBeLessThan(median(familyCalibrated.unanchoredErrors));
  });
});
