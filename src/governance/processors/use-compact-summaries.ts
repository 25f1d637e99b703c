import type { ContentBlock } from "../../model/message.ts";
import { computeBoundaries, isGovernable } from "../boundaries.ts";
import type { Processor } from "../processor.ts";
import { mapMessages, reportRewrite, withContent } from "../rewrite.ts";

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

/**
 * Sends a tool result's pre-computed `compactSummary` instead of its full content once the result is outside
 * the newest step (the LLMSession seed's compact summaries).
 */
export const useCompactSummaries: Processor = {
  name: "use-compact-summaries",
  process(messages, context) {
    if (!context.policy.useCompactSummaries) return messages;
    const boundaries = computeBoundaries(messages, context.tokensOf, 0);
    const result = mapMessages(messages, (message, index) => {
      if (message.role !== "tool" || !isGovernable(index, boundaries)) return undefined;
      const content = message.content.map(summarised);
      return content.some((block, at) => block !== message.content[at])
        ? withContent(message, content)
        : undefined;
    });
    reportRewrite(context, "compact-summaries-used", result);
    return result.messages;
  },
};
