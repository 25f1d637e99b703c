import { groupTurns } from "../../model/turns.ts";
import type { Processor } from "../processor.ts";
import { sumTokens } from "../processor.ts";
import { trimmedMarker } from "../../summarize/summarize-request-schema.ts";
import { summarizeSafely } from "../summarize-safely.ts";

/**
 * Above `maxTurns` turns, drops the oldest half of the complete turns (whole turns, so a tool call never loses
 * its result). What is dropped is summarised and handed to the memory sink (the CowAgent seed's rule).
 */
export const trimTurns: Processor = {
  name: "trim-turns",
  async process(messages, context) {
    const maxTurns = context.policy.maxTurns;
    if (maxTurns === 0) return messages;
    const turns = groupTurns(messages).filter((turn) => turn.number > 0);
    if (turns.length <= maxTurns) return messages;
    const complete = turns.slice(0, -1);
    const dropCount = Math.ceil(complete.length / 2);
    if (dropCount === 0) return messages;
    const first = complete[0]!;
    const last = complete[dropCount - 1]!;
    const dropped = messages.slice(first.start, last.end);
    const summary = await summarizeSafely(
      context,
      { messages: dropped, maxTokens: 1_000 },
      trimmedMarker(dropped.length),
    );
    await context.memorySink?.({
      sessionId: dropped[0]!.sessionId,
      summary,
      messageIds: dropped.map((message) => message.id),
    });
    const output = [...messages.slice(0, first.start), ...messages.slice(last.end)];
    context.emit({
      type: "turns-trimmed",
      tokensBefore: sumTokens(dropped, context.tokensOf),
      tokensAfter: 0,
      messageIds: dropped.map((message) => message.id),
      turns: dropCount,
      summary,
    });
    return output;
  },
};
