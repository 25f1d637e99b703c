import { describe, expect, it } from "vitest";
import { importTranscriptFile, type ImportedConversation } from "../formats/transcripts/index.ts";
import type { Message } from "../model/message.ts";
import { counterForModel } from "../tokens/counter-for-model.ts";
import { TokenCache } from "../tokens/token-cache.ts";
import { transcriptFilesOf } from "../../test/support/transcripts.ts";
import { UsageAnchor } from "./usage-anchor.ts";

/**
 * Replays real agent sessions request by request, as the governor anchors its counts. Before each request the
 * anchor estimates its prompt tokens from the local count of the view (the previous request's reported count,
 * scaled by the measured ratio for what was added since); the provider's reported count is then observed. Claude
 * Code transcripts lack the system prompt and tool schemas, which is what anchoring absorbs; Codex transcripts
 * carry them but its reasoning is encrypted.
 *
 * The growth between two requests is printed, not bounded: the anchor scales every counted token by the measured
 * ratio, so tokens the counter never sees (Claude Code's system prompt and tools) inflate the ratio and with it
 * the estimated growth (a median error near 66% on Claude Code, 12% on Codex). It errs on the safe side: the
 * governor decides on the total, which stays within a percent.
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
   * The same totals predicted by the local count alone: the whole view's count plus the unseen part (system
   * prompt, tools) measured once, at the conversation's first request.
   */
  readonly unanchoredErrors: number[];
}

async function replay(conversations: readonly ImportedConversation[]): Promise<ReplayResult> {
  const result: ReplayResult = { growthErrors: [], totalErrors: [], unanchoredErrors: [] };
  for (const conversation of conversations) {
    const model = conversation.messages.find((message) => message.model !== undefined)?.model ?? "unknown";
    const cache = new TokenCache(await counterForModel(model));
    const anchor = new UsageAnchor();
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
        const counted = cache.total(view);
        const estimate = anchor.estimate(counted);
        if (previous !== undefined && reported > previous) {
          const realGrowth = reported - previous;
          result.growthErrors.push(Math.abs(estimate - previous - realGrowth) / realGrowth);
          result.totalErrors.push(Math.abs(estimate - reported) / reported);
          result.unanchoredErrors.push(Math.abs(counted + (unseen ?? 0) - reported) / reported);
        }
        unseen ??= reported - counted;
        anchor.observe(counted, reported);
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

async function measure(label: string, conversations: readonly ImportedConversation[]) {
  const result = await replay(conversations);
  console.log(
    [
      `${label}: ${result.growthErrors.length} anchored requests in ${conversations.length} conversations`,
      `  median growth error: ${percent(median(result.growthErrors))}`,
      `  median total error: ${percent(median(result.totalErrors), 2)} anchored, ${percent(median(result.unanchoredErrors), 2)} local count alone`,
    ].join("\n"),
  );
  return result;
}

describe("usage anchoring on real transcripts", () => {
  it("predicts Claude Code request totals within 1% (median), a tenth of the local count's error", async () => {
    const result = await measure("Claude Code", await load("claude-code"));
    expect(result.growthErrors.length).toBeGreaterThan(500);
    expect(median(result.totalErrors)).toBeLessThan(0.01);
    expect(median(result.totalErrors)).toBeLessThan(median(result.unanchoredErrors) / 10);
  });

  it("predicts Codex request totals within 0.5% (median), a tenth of the local count's error", async () => {
    const conversations = (await load("codex")).filter((conversation) =>
      conversation.messages.some((message) => message.usage !== undefined),
    );
    const result = await measure("Codex", conversations);
    expect(result.growthErrors.length).toBeGreaterThan(50);
    expect(median(result.totalErrors)).toBeLessThan(0.005);
    expect(median(result.totalErrors)).toBeLessThan(median(result.unanchoredErrors) / 10);
  });
});
