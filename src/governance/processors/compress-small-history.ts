import type { Message } from "../../model/message.ts";
import { groupTurns } from "../../model/turns.ts";
import type { Processor } from "../processor.ts";
import { sumTokens } from "../processor.ts";
import { withContent } from "../rewrite.ts";

/**
 * Fallback for short histories still over budget (fewer than `smallHistoryTurns` turns): each complete turn
 * keeps only its first user text and its final reply, dropping the tool chains in between (the CowAgent seed's
 * text compression). The current turn is untouched.
 */
export const compressSmallHistory: Processor = {
  name: "compress-small-history",
  process(messages, context) {
    const { policy, window } = context;
    if (policy.smallHistoryTurns === 0 || policy.compactionTrigger === 0) return messages;
    const before = context.fixedTokens + sumTokens(messages, context.tokensOf);
    if (!context.force && before <= policy.compactionTrigger * window.usable) return messages;
    const turns = groupTurns(messages);
    const realTurns = turns.filter((turn) => turn.number > 0);
    if (realTurns.length >= policy.smallHistoryTurns || realTurns.length < 2) return messages;
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
  },
};
