import { z } from "zod";
import { validate } from "../../model/schemas.ts";
import type { Message } from "../../model/message.ts";
import { groupTurns } from "../../model/turns.ts";
import type { Processor, ProcessorContext } from "../processor.ts";
import { sumTokens } from "../processor.ts";
import { withContent } from "../rewrite.ts";

const NAME = "compress-small-history";
const optionsSchema = z.strictObject({
  /** Histories with fewer user turns than this are compressed. */
  belowTurns: z.number().int().positive(),
  /** …once the payload passes this share of the usable window (or the request would overflow). */
  trigger: z.number().gt(0).max(1),
});

/** Options of `createCompressSmallHistory`. */
export type CompressSmallHistoryOptions = z.input<typeof optionsSchema>;

function compress(
  options: z.output<typeof optionsSchema>,
  messages: readonly Message[],
  context: ProcessorContext,
): readonly Message[] {
  const { window } = context;
  const before = context.fixedTokens + sumTokens(messages, context.tokensOf);
  if (!context.force && before <= options.trigger * window.usable) return messages;
  const turns = groupTurns(messages);
  const realTurns = turns.filter((turn) => turn.number > 0);
  if (realTurns.length >= options.belowTurns || realTurns.length < 2) return messages;
  const output: Message[] = [];
  const removed: Message[] = [];
  turns.forEach((turn, position) => {
    if (turn.number === 0 || position === turns.length - 1) {
      output.push(...turn.messages);
      return;
    }
    const [opener, ...rest] = turn.messages;
    output.push(opener!);
    const finalReply = rest.findLast(
      (message) => message.role === "assistant" && message.content.some((block) => block.type === "text"),
    );
    for (const message of rest) if (message !== finalReply) removed.push(message);
    if (finalReply) {
      const textOnly = finalReply.content.filter((block) => block.type === "text");
      output.push(
        textOnly.length === finalReply.content.length ? finalReply : withContent(finalReply, textOnly),
      );
    }
  });
  if (removed.length === 0) return messages;
  context.emit({
    type: "small-history-compressed",
    tokensBefore: before,
    tokensAfter: context.fixedTokens + sumTokens(output, context.tokensOf),
    messageIds: removed.map((message) => message.id),
  });
  return output;
}

/**
 * Fallback for short histories still over budget (fewer than `belowTurns` turns): each complete turn keeps only
 * its first user text and its final reply, dropping the tool chains in between (the CowAgent seed's text
 * compression). The current turn is untouched. Runs at every checkpoint (doing nothing below `trigger`) and,
 * forced, when a request would overflow. Throws `ValidationError` for bad options.
 *
 * @example
 * const pipeline = createPipeline({ processors: [createCompressSmallHistory({ belowTurns: 5, trigger: 0.8 })] });
 */
export function createCompressSmallHistory(options: CompressSmallHistoryOptions): Processor {
  const resolved = validate(optionsSchema, options, `${NAME} options`);
  return {
    name: NAME,
    options: resolved,
    triggers: [{ kind: "checkpoint" }, { kind: "overflow" }],
    process: (messages, context) => compress(resolved, messages, context),
  };
}
