import { z } from "zod";
import { messageText } from "../model/blocks.ts";
import { validate } from "../model/schemas.ts";
import type { TokenCounter } from "../tokens/token-counter.ts";
import { fitSnapshot } from "./fit-snapshot.ts";
import { digestHistory } from "./history-digest.ts";
import { snapshotCandidates } from "./snapshot-candidates.ts";
import { mergeSnapshots, parseSnapshot } from "./snapshot-sections.ts";
import { summarizeRequestSchema } from "./summarize-request-schema.ts";
import type { SummarizeRequest, Summarizer } from "./summarizer.ts";

/** Options of `createExtractiveSummarizer`. */
export interface ExtractiveSummarizerOptions {
  /** Counts the summary's tokens against `maxTokens`. Default: an estimate of one token per 4 characters. */
  readonly counter?: Pick<TokenCounter, "countText">;
  /**
   * A user instruction longer than this (pasted logs) keeps its first chunk among the instructions; the other
   * chunks are given up early for the budget. Default 1,500 characters.
   */
  readonly maxInstructionChars?: number;
  /** Each kept final reply is clipped to this. Default 500 characters. */
  readonly maxConclusionChars?: number;
  /** The final replies of this many of the newest turns are kept. Default 3. */
  readonly conclusionTurns?: number;
}

const optionsSchema = z.object({
  counter: z.custom<Pick<TokenCounter, "countText">>(
    (value) => typeof (value as { countText?: unknown } | null)?.countText === "function",
    "expected a TokenCounter (an object with countText)",
  ),
  maxInstructionChars: z.number().int().min(80).default(1_500),
  maxConclusionChars: z.number().int().min(40).default(500),
  conclusionTurns: z.number().int().min(0).default(3),
});

/** One token per 4 characters: the default when no counter is given. */
export const charEstimateCounter: Pick<TokenCounter, "countText"> = {
  countText: (text) => Math.ceil(text.length / 4),
};

/** The header governance puts before a summary's body (see `compact-history`). */
const SUMMARY_HEADER = /^\[Summary of \d+ earlier messages[^\n]*\]\n?/;

const FOCUS_STOP_WORDS = new Set(["focus", "about", "with", "that", "this", "from", "into", "only", "keep"]);

/** The words of a `/compact` focus that items are matched against (lower case, 4+ letters). */
export function focusTerms(focus: string | undefined): string[] {
  const words = (focus ?? "").toLowerCase().match(/[\p{L}\p{N}_./-]{4,}/gu) ?? [];
  return [...new Set(words.filter((word) => !FOCUS_STOP_WORDS.has(word)))];
}

/**
 * The offline summarizer: deterministic, no model. Keeps the user's instructions verbatim, the files touched
 * (and by which tools), tool calls grouped and counted (`Read(src/a.ts) ×3`), failures and whether a later run
 * of the same call succeeded, other error lines, the newest plan or todo list and the final replies, under the
 * headings the LLM summarizer uses. With `previousSummary` it merges: the previous items are kept, counts add
 * up, a fixed failure is marked fixed. Within `maxTokens` it gives up the least important items first (files
 * only mentioned, then loose error lines, …, the user's instructions last) and says how many it dropped.
 *
 * @example
 * const summarizer = createExtractiveSummarizer({ counter });
 * const summary = await summarizer.summarize({ messages, maxTokens: 2_000 });
 */
export function createExtractiveSummarizer(options: ExtractiveSummarizerOptions = {}): Summarizer {
  const settings = validate(
    optionsSchema,
    { ...options, counter: options.counter ?? charEstimateCounter },
    "extractive summarizer options",
  );
  return {
    name: "extractive",
    async summarize(request: SummarizeRequest): Promise<string> {
      validate(summarizeRequestSchema, request, "summarize request");
      request.signal?.throwIfAborted();
      const digest = digestHistory(request.messages, settings);
      // Summaries inside the range (older checkpoints) are merged like the previous summary, after it.
      const inRange = request.messages
        .filter((message) => message.kind === "summary")
        .map((message) => messageText(message).replace(SUMMARY_HEADER, ""));
      const previous = mergeSnapshots([request.previousSummary ?? "", ...inRange].map(parseSnapshot));
      const candidates = snapshotCandidates(digest, previous, {
        focusTerms: focusTerms(request.focus),
        maxInstructionChars: settings.maxInstructionChars,
      });
      const counter = settings.counter;
      return fitSnapshot(candidates, request.maxTokens, (text) => counter.countText(text)).text;
    },
  };
}
