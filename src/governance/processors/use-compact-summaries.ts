import { z } from "zod";
import { validate } from "../../model/schemas.ts";
import type { ContentBlock, Message } from "../../model/message.ts";
import { computeBoundaries, isGovernable } from "../boundaries.ts";
import { AT_EVERY_CHECKPOINT, type Processor, type ProcessorContext } from "../processor.ts";
import { mapMessages, reportRewrite, withContent } from "../rewrite.ts";
import { RewriteMemo } from "../rewrite-memo.ts";

function summarised(block: ContentBlock): ContentBlock {
  if (
    block.type !== "tool-result" ||
    block.compactSummary === undefined ||
    block.content === block.compactSummary
  ) {
    return block;
  }
  return { ...block, content: block.compactSummary };
}

const NAME = "use-compact-summaries";
const optionsSchema = z.strictObject({});

/** Options of `createUseCompactSummaries` (none yet: present in a pipeline means on). */
export type UseCompactSummariesOptions = z.input<typeof optionsSchema>;

function useSummaries(
  messages: readonly Message[],
  context: ProcessorContext,
  memo: RewriteMemo,
): readonly Message[] {
  const boundaries = computeBoundaries(messages, context.tokensOf, 0);
  const result = mapMessages(messages, (message, index) => {
    if (message.role !== "tool" || !isGovernable(index, boundaries)) return undefined;
    const known = memo.get(message);
    if (known !== undefined) return known;
    const content = message.content.map(summarised);
    return content.some((block, at) => block !== message.content[at])
      ? memo.set(message, withContent(message, content))
      : undefined;
  });
  reportRewrite(context, "compact-summaries-used", result);
  return result.messages;
}

/**
 * Sends a tool result's pre-computed `compactSummary` instead of its full content once the result is outside
 * the newest step (the LLMSession seed's compact summaries). Runs at every checkpoint.
 *
 * @example
 * const pipeline = createPipeline({ processors: [createUseCompactSummaries()] });
 */
export function createUseCompactSummaries(options: UseCompactSummariesOptions = {}): Processor {
  validate(optionsSchema, options, `${NAME} options`);
  const memo = new RewriteMemo();
  return {
    name: NAME,
    triggers: AT_EVERY_CHECKPOINT,
    process: (messages, context) => useSummaries(messages, context, memo),
  };
}
