import type { ContentBlock, Message } from "../../model/message.ts";
import { toolResultText } from "../../model/blocks.ts";
import type { TokenCounter } from "../../tokens/token-counter.ts";

/** Flat estimate for an image or file block: providers bill media by size, not by base64 length. */
const MEDIA_TOKENS = 1_600;

function estimateText(text: string): number {
  return Math.ceil(text.length / 4);
}

function blockCharacters(block: ContentBlock): number {
  switch (block.type) {
    case "text":
    case "reasoning":
      return block.text.length;
    case "tool-call":
      return block.name.length + JSON.stringify(block.input).length;
    case "tool-result":
      return toolResultText(block.content).length;
    default:
      return 0;
  }
}

function estimateMessage(message: Message): number {
  let characters = 0;
  let media = 0;
  for (const block of message.content) {
    characters += blockCharacters(block);
    if (block.type === "image" || block.type === "file") media++;
    if (block.type === "tool-result") media += block.attachments?.length ?? 0;
  }
  return Math.ceil(characters / 4) + media * MEDIA_TOKENS;
}

/**
 * A stand-in token counter: one token per four characters of text, reasoning, tool arguments and tool output,
 * and a flat 1,600 per image or file. Deterministic and dependency-free; used by `ctxkit stats` until the
 * calibrated counters of `tokens/` replace it (pass another `TokenCounter` to `conversationStats`).
 *
 * @example
 * provisionalTokenCounter.countText("12345678"); // 2
 */
export const provisionalTokenCounter: TokenCounter = {
  name: "estimate:chars/4",
  countText: estimateText,
  countMessage: estimateMessage,
};
