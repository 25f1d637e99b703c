import { currentTurnStart } from "../../model/turns.ts";
import type { Processor } from "../processor.ts";
import { mapMessages, reportRewrite, withContent } from "../rewrite.ts";

/**
 * Removes reasoning blocks from turns before the current one: providers do not need old thoughts, and they are
 * often thousands of tokens. The current turn keeps its reasoning (some providers require it inside a tool loop).
 */
export const stripOlderReasoning: Processor = {
  name: "strip-older-reasoning",
  process(messages, context) {
    if (!context.policy.stripOlderReasoning) return messages;
    const turnStart = currentTurnStart(messages);
    const result = mapMessages(messages, (message, index) => {
      if (index >= turnStart || !message.content.some((block) => block.type === "reasoning"))
        return undefined;
      return withContent(
        message,
        message.content.filter((block) => block.type !== "reasoning"),
      );
    });
    if (result.originals.length === 0) return messages;
    reportRewrite(context, "reasoning-stripped", result);
    // An assistant message that held only reasoning is now empty: drop it (it answers nothing, pairs with nothing).
    const kept = result.messages.filter((message) => message.content.length > 0);
    return kept;
  },
};
