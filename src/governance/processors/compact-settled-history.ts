import { z } from "zod";
import { validate } from "../../model/schemas.ts";
import type { Message } from "../../model/message.ts";
import { withOffloadedOutputs } from "../offload-store.ts";
import type { Processor, ProcessorContext } from "../processor.ts";
import { sumTokens } from "../processor.ts";
import { learnSummarySize, netSaving, planSettledCompaction } from "../settled-plan.ts";
import { summarizeSafely } from "../summarize-safely.ts";
import { segmentSummary, segmentSummaryRequest, summaryBody, summaryBudget } from "./compact-history.ts";

const NAME = "compact-settled-history";
const optionsSchema = z.strictObject({
  /** Largest summary, in tokens (also capped at 10% of the usable window). */
  summaryMaxTokens: z.number().int().nonnegative().default(6_000),
  /** After a summary that did not pay, wait until the payload grew by this share of the usable window. */
  retryShare: z.number().min(0).max(1).default(0.1),
  /** Turns before the current one whose dialogue (user message and final reply, when small) stays verbatim. */
  dialogueTurns: z.number().int().nonnegative().default(2),
});

/** Options of `createCompactSettledHistory`. */
export type CompactSettledHistoryOptions = z.input<typeof optionsSchema>;

/** `createCompactSettledHistory`'s resolved options. */
export type SettledCompactionSettings = z.output<typeof optionsSchema>;

async function compactSettled(
  options: SettledCompactionSettings,
  messages: readonly Message[],
  context: ProcessorContext,
): Promise<readonly Message[]> {
  if (context.requestsSoFar === undefined) return messages;
  const before = context.fixedTokens + sumTokens(messages, context.tokensOf);
  if (before < (context.guard.settledPausedBelow ?? 0)) return messages;
  const plan = planSettledCompaction(messages, context, options);
  if (plan === undefined) return messages;
  const maxTokens = summaryBudget(options.summaryMaxTokens, context);
  const messageIds = plan.segments.flatMap((segment) =>
    messages.slice(segment.start, segment.end).map((message) => message.id),
  );
  const reason = "settled history: summarising it pays for re-writing the cached prefix";
  context.emit({ type: "compaction-start", reason, tokensBefore: before, tokensAfter: before, messageIds });
  const started = context.clock().getTime();
  const summaries: Message[] = [];
  for (const segment of plan.segments) {
    const { request, replaced } = segmentSummaryRequest(messages, segment, context, maxTokens);
    const messagesRead = context.offloadStore
      ? await withOffloadedOutputs(request.messages, context.offloadStore)
      : request.messages;
    const body = await summarizeSafely(context, { ...request, messages: messagesRead }, undefined);
    if (body !== undefined) summaries.push(segmentSummary(messages, segment, replaced, body, context));
  }
  const summaryTokens = summaries.map((summary) => context.tokensOf(summary));
  const failed =
    summaries.length < plan.segments.length ||
    summaryTokens.some((tokens, index) => tokens >= plan.segmentTokens[index]!);
  if (!failed) learnSummarySize(context.guard, summaryTokens, plan.summaryTokens);
  if (failed) {
    // A failing summarizer is not called again until the payload has grown by the retry margin.
    context.guard.settledPausedBelow = before + options.retryShare * context.window.usable;
    context.emit({
      type: "compaction-rolled-back",
      reason:
        summaries.length < plan.segments.length
          ? "the summarizer failed; the history stays as it was"
          : "a summary came out no smaller than what it stands for; the history stays as it was",
      tokensBefore: before,
      tokensAfter: before,
      messageIds,
    });
    return messages;
  }
  // Only bigger than expected: the estimate has learnt from it, so the same plan is not tried again as is.
  if (netSaving(messages, plan.segments, plan.segmentTokens, summaryTokens, context) <= 0) {
    context.emit({
      type: "compaction-rolled-back",
      reason: "the summaries came out bigger than estimated; rewriting the cached prefix no longer pays",
      tokensBefore: before,
      tokensAfter: before,
      messageIds,
    });
    return messages;
  }
  const output: Message[] = [];
  let cursor = 0;
  plan.segments.forEach((segment, index) => {
    output.push(...messages.slice(cursor, segment.start), summaries[index]!);
    cursor = segment.end;
  });
  output.push(...messages.slice(cursor));
  const after = context.fixedTokens + sumTokens(output, context.tokensOf);
  for (const [index, segment] of plan.segments.entries()) {
    await context.memorySink?.({
      sessionId: summaries[index]!.sessionId,
      summary: summaryBody(summaries[index]!),
      messageIds: messages.slice(segment.start, segment.end).map((message) => message.id),
    });
  }
  context.emit({
    type: "compaction-end",
    summarizer: context.summarizer.name,
    summaryTokens: summaryTokens.reduce((sum, tokens) => sum + tokens, 0),
    durationMs: context.clock().getTime() - started,
    tokensBefore: before,
    tokensAfter: after,
    messageIds,
  });
  return output;
}

/**
 * Cache-priced compaction of settled history: whatever lies before the protected tail (the newest step and the
 * protection window of recent tool output) and is not kept verbatim (see `keptVerbatim`) is summarised as soon
 * as the prompt-cache arithmetic says it pays (`planSettledCompaction`), long before the compaction trigger.
 * Summaries are made from the tools' real outputs, offloaded ones read back. Figures are estimated before any
 * summarizer call and checked after. A failing summarizer never trims history here (unlike compaction at the trigger, this one is optional),
 * and after a summary that did not pay — or a failed one at the trigger — it waits until the payload has grown
 * by the retry margin (`retryShare`). Takes an optional checkpoint once enough
 * history came after the newest summary (see the `settled-history` trigger).
 *
 * @example
 * const pipeline = createPipeline({ processors: [createCompactSettledHistory()], settings: { pricing: "openai" } });
 */
export function createCompactSettledHistory(options: CompactSettledHistoryOptions = {}): Processor {
  const resolved = validate(optionsSchema, options, `${NAME} options`);
  return {
    name: NAME,
    options: resolved,
    triggers: [{ kind: "settled-history" }],
    process: (messages, context) => compactSettled(resolved, messages, context),
  };
}
