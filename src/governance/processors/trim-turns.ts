import { z } from "zod";
import { validate } from "../../model/schemas.ts";
import type { Message } from "../../model/message.ts";
import { groupTurns } from "../../model/turns.ts";
import type { Processor, ProcessorContext } from "../processor.ts";
import { sumTokens } from "../processor.ts";
import { trimmedMarker } from "../../summarize/summarize-request-schema.ts";
import { summarizeSafely } from "../summarize-safely.ts";
import { segmentSummary, segmentSummaryRequest, summaryBody } from "./compact-history.ts";

const NAME = "trim-turns";
const optionsSchema = z.strictObject({
  /** Above this many user turns in the view, the oldest half of the complete ones is trimmed. */
  maxTurns: z.number().int().positive(),
});

/** Options of `createTrimTurns`. */
export type TrimTurnsOptions = z.input<typeof optionsSchema>;

async function trim(
  maxTurns: number,
  messages: readonly Message[],
  context: ProcessorContext,
): Promise<readonly Message[]> {
  const turns = groupTurns(messages).filter((turn) => turn.number > 0);
  if (turns.length <= maxTurns) return messages;
  const complete = turns.slice(0, -1);
  const dropCount = Math.ceil(complete.length / 2);
  if (dropCount === 0) return messages;
  const first = complete[0]!;
  const end = complete[dropCount - 1]!.end;
  const start =
    first.start > 0 && messages[first.start - 1]!.kind === "summary" ? first.start - 1 : first.start;
  const segment = { start, end };
  const { request, replaced } = segmentSummaryRequest(messages, segment, context, 1_000);
  const body = await summarizeSafely(context, request, trimmedMarker(replaced));
  const summary = segmentSummary(messages, segment, replaced, body, context);
  const dropped = messages.slice(start, end);
  await context.memorySink?.({
    sessionId: summary.sessionId,
    summary: summaryBody(summary),
    messageIds: dropped.map((message) => message.id),
  });
  context.emit({
    type: "turns-trimmed",
    tokensBefore: sumTokens(dropped, context.tokensOf),
    tokensAfter: context.tokensOf(summary),
    messageIds: dropped.map((message) => message.id),
    turns: dropCount,
    summary: body,
  });
  return [...messages.slice(0, start), summary, ...messages.slice(end)];
}

/**
 * Above `maxTurns` turns, drops the oldest half of the complete turns (whole turns, so a tool call never loses
 * its result). What is dropped is summarised (the CowAgent seed's rule) into a summary message standing where the
 * dropped turns stood — an earlier summary right before them is updated, not repeated — and the summary is handed
 * to the memory sink. The summary is in the session's own history, like every compaction summary (the Coqui seed:
 * summaries persisted into history survive a restart), so its own core memories can leave it out.
 * Takes a checkpoint once the view holds more than `maxTurns` turns. Throws `ValidationError` for bad options.
 *
 * @example
 * const pipeline = createPipeline({ processors: [createTrimTurns({ maxTurns: 30 })] });
 */
export function createTrimTurns(options: TrimTurnsOptions): Processor {
  const { maxTurns } = validate(optionsSchema, options, `${NAME} options`);
  return {
    name: NAME,
    options: { maxTurns },
    triggers: [{ kind: "turn-count", above: maxTurns }],
    process: (messages, context) => trim(maxTurns, messages, context),
  };
}
