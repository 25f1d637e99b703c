import { z } from "zod";
import { validate } from "../../model/schemas.ts";
import { messageText } from "../../model/blocks.ts";
import type { Message } from "../../model/message.ts";
import { planCompaction, type Segment } from "../compaction-plan.ts";
import type { Processor, ProcessorContext } from "../processor.ts";
import type { PresetOptions } from "../preset-options.ts";
import { sumTokens } from "../processor.ts";
import { trimmedMarker } from "../../summarize/summarize-request-schema.ts";
import { summarizeSafely } from "../summarize-safely.ts";
import type { SummarizeRequest } from "../../summarize/summarizer.ts";

const SUMMARY_HEADER = /^\[Summary of \d+ earlier messages[^\n]*\]\n/;

/** The body of a summary message, without its header line. */
export function summaryBody(message: Message): string {
  return messageText(message).replace(SUMMARY_HEADER, "");
}

/** What summarising `segment` asks of the summarizer (an earlier summary at its start is updated, not rebuilt). */
export function segmentSummaryRequest(
  messages: readonly Message[],
  segment: Segment,
  context: ProcessorContext,
  maxTokens: number,
): { request: Omit<SummarizeRequest, "signal">; replaced: number } {
  const first = messages[segment.start]!;
  const previous = first.kind === "summary" ? first : undefined;
  const fresh = messages.slice(previous ? segment.start + 1 : segment.start, segment.end);
  return {
    request: {
      messages: fresh,
      maxTokens,
      ...(previous !== undefined && { previousSummary: summaryBody(previous) }),
      ...(context.manual?.focus !== undefined && { focus: context.manual.focus }),
    },
    replaced: (previous?.summaryOf?.messageCount ?? (previous ? 1 : 0)) + fresh.length,
  };
}

/** The summary message standing where `segment` stood, with `body` as its text. */
export function segmentSummary(
  messages: readonly Message[],
  segment: Segment,
  replaced: number,
  body: string,
  context: ProcessorContext,
): Message {
  const first = messages[segment.start]!;
  const previous = first.kind === "summary" ? first : undefined;
  return Object.freeze({
    id: context.ids("sum"),
    sessionId: first.sessionId,
    seq: first.seq,
    turn: first.turn,
    role: "user",
    kind: "summary",
    summaryOf: {
      fromSeq: previous?.summaryOf?.fromSeq ?? first.seq,
      toSeq: messages[segment.end - 1]!.seq,
      messageCount: replaced,
    },
    content: Object.freeze([
      {
        type: "text",
        text:
          `[Summary of ${replaced} earlier messages — background for what follows; ` +
          `the messages after it are more recent]\n${body}`,
      },
    ]),
    createdAt: context.clock().toISOString(),
  } satisfies Message);
}

async function summarizeSegment(
  messages: readonly Message[],
  segment: Segment,
  context: ProcessorContext,
  maxTokens: number,
): Promise<Message> {
  const { request, replaced } = segmentSummaryRequest(messages, segment, context, maxTokens);
  const body = await summarizeSafely(context, request, trimmedMarker(replaced));
  return segmentSummary(messages, segment, replaced, body, context);
}

/** The largest summary, in tokens: `maxTokens`, capped at 10% of the usable window. */
export function summaryBudget(maxTokens: number, context: Pick<ProcessorContext, "window">): number {
  return Math.max(200, Math.min(maxTokens, Math.floor(context.window.usable * 0.1)));
}

const NAME = "compact-history";
const fraction = z.number().min(0).max(1);
const optionsSchema = z.strictObject({
  /** Compact when the payload passes this share of the usable window. */
  trigger: z.number().gt(0).max(1),
  /** Also compact when the history passes this many messages (the co-cli seed's `max_history_messages`). 0: never. */
  aboveMessages: z.number().int().nonnegative().default(0),
  /** Recent whole user turns kept verbatim: at least this share of the usable window… */
  tailShare: fraction.default(0.25),
  /** …and at least this many turns, when they fit. */
  minTailTurns: z.number().int().nonnegative().default(2),
  /** Largest summary, in tokens (also capped at 10% of the usable window). */
  summaryMaxTokens: z.number().int().nonnegative().default(6_000),
  /** A rolled-back compaction is retried only after the history grew by this share of the usable window. */
  retryShare: fraction.default(0.1),
});

/** Options of `createCompactHistory`. */
export type CompactHistoryOptions = z.input<typeof optionsSchema>;
type CompactionSettings = z.output<typeof optionsSchema>;

async function compact(
  settings: CompactionSettings,
  messages: readonly Message[],
  context: ProcessorContext,
): Promise<readonly Message[]> {
  const { window, guard } = context;
  const before = context.fixedTokens + sumTokens(messages, context.tokensOf);
  const manual = context.manual !== undefined;
  const overTokens = before > settings.trigger * window.usable;
  const overCount = settings.aboveMessages > 0 && messages.length > settings.aboveMessages;
  if (!context.force && !manual && !overTokens && !overCount) return messages;
  const segments = planCompaction(messages, context.tokensOf, {
    usable: window.usable,
    // Past the message count alone, a tail worth a share of the window could be every message there is.
    tailShare: overCount && !overTokens ? 0 : settings.tailShare,
    minTailTurns: settings.minTailTurns,
    // The user asked: everything but the last exchange, whatever the window says (the co-cli seed's /compact).
    force: context.force || manual,
  });
  const margin = settings.retryShare * window.usable;
  const failed = (guard.failedSegments ??= {});
  const worthTrying = segments.filter((segment) => {
    const tokens = sumTokens(messages.slice(segment.start, segment.end), context.tokensOf);
    const failedAt = failed[messages[segment.start]!.id];
    return manual || failedAt === undefined || tokens >= failedAt + margin;
  });
  if (worthTrying.length === 0) {
    if (segments.length > 0) {
      context.emit({
        type: "checkpoint-skipped",
        reason: "an earlier summary of this part did not shrink it; waiting for it to grow",
        tokensBefore: before,
        tokensAfter: before,
        messageIds: [],
      });
    }
    return messages;
  }
  const replacedIds = worthTrying.flatMap((segment) =>
    messages.slice(segment.start, segment.end).map((message) => message.id),
  );
  context.emit({
    type: "compaction-start",
    reason: manual
      ? "requested by the user"
      : context.force
        ? "the request would overflow the window"
        : overTokens
          ? "the payload passed the compaction trigger"
          : `the history passed ${settings.aboveMessages} messages`,
    tokensBefore: before,
    tokensAfter: before,
    messageIds: replacedIds,
  });
  const started = context.clock().getTime();
  const maxTokens = summaryBudget(settings.summaryMaxTokens, context);
  const output: Message[] = [];
  const summaries: Message[] = [];
  let cursor = 0;
  for (const segment of worthTrying) {
    output.push(...messages.slice(cursor, segment.start));
    const replaced = messages.slice(segment.start, segment.end);
    const replacedTokens = sumTokens(replaced, context.tokensOf);
    const summary = await summarizeSegment(messages, segment, context, maxTokens);
    // A summary bigger than what it stands for would only inflate the context: keep that segment as it was
    // (unless the user asked for the compaction: a tiny history then grows by a little, as they wanted).
    if (manual || context.tokensOf(summary) < replacedTokens) {
      delete failed[replaced[0]!.id];
      summaries.push(summary);
      output.push(summary);
    } else {
      failed[replaced[0]!.id] = replacedTokens;
      output.push(...replaced);
    }
    cursor = segment.end;
  }
  output.push(...messages.slice(cursor));
  const after = context.fixedTokens + sumTokens(output, context.tokensOf);
  // A summary no smaller than what it replaced: optional compaction waits too.
  if (summaries.length < worthTrying.length) guard.settledPausedBelow = before + margin;
  if (summaries.length === 0 || (after >= before && !manual)) {
    context.emit({
      type: "compaction-rolled-back",
      reason: `the compacted context (${after} tokens) is not smaller than before (${before})`,
      tokensBefore: before,
      tokensAfter: before,
      messageIds: replacedIds,
    });
    return messages;
  }
  for (const summary of summaries) {
    await context.memorySink?.({
      sessionId: summary.sessionId,
      summary: summaryBody(summary),
      messageIds: replacedIds,
    });
  }
  context.emit({
    type: "compaction-end",
    summarizer: context.summarizer.name,
    summaryTokens: sumTokens(summaries, context.tokensOf),
    durationMs: context.clock().getTime() - started,
    tokensBefore: before,
    tokensAfter: after,
    messageIds: replacedIds,
  });
  return output;
}

/**
 * Token-budget compaction. When the payload passes `trigger` of the usable window, the history passes
 * `aboveMessages` messages, or the pre-flight check forces it, summarises the middle of the history into user
 * messages that stand where the replaced messages stood, updating an earlier summary instead of starting over.
 * A result that is not smaller is rolled back and not retried until the history has grown (the inflation guard).
 * A user's `/compact` always compacts: everything but the leading system messages and the last exchange.
 * Takes a mandatory checkpoint at either threshold, runs forced when a request would overflow, and on `/compact`.
 * Throws `ValidationError` for bad options.
 *
 * @example
 * const pipeline = createPipeline({ processors: [createCompactHistory({ trigger: 0.8, tailShare: 0.25 })] });
 */
export function createCompactHistory(options: CompactHistoryOptions): Processor {
  const settings = validate(optionsSchema, options, `${NAME} options`);
  return {
    name: NAME,
    options: settings,
    triggers: [
      { kind: "payload-share", share: settings.trigger },
      ...(settings.aboveMessages > 0
        ? [{ kind: "message-count", above: settings.aboveMessages } as const]
        : []),
      { kind: "overflow" },
      { kind: "user-request" },
    ],
    process: (messages, context) => compact(settings, messages, context),
  };
}

/**
 * The options of the compaction a preset's knobs configure (`compactionTrigger`, `compactAboveMessages`,
 * `tailShare`, `minTailTurns`, `summaryMaxTokens`, `inflationRetryShare`).
 */
export function compactionOptionsOf(options: PresetOptions): CompactionSettings {
  return {
    trigger: options.compactionTrigger,
    aboveMessages: options.compactAboveMessages,
    tailShare: options.tailShare,
    minTailTurns: options.minTailTurns,
    summaryMaxTokens: options.summaryMaxTokens,
    retryShare: options.inflationRetryShare,
  };
}
