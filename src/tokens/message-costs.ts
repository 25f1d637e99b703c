import { toolResultText } from "../model/blocks.ts";
import type { ContentBlock, Message } from "../model/message.ts";
import { fileTokens, imageTokens, type MediaCosts } from "./media-tokens.ts";

/** Framing a provider adds around content, in tokens, plus the fixed costs of binary content. */
export interface MessageCosts extends MediaCosts {
  /** Each message: role and delimiters (OpenAI chat: 3 + 1 for the role). */
  readonly perMessage: number;
  /** Each tool call: call id, delimiters and argument framing (the name and arguments are counted as text). */
  readonly perToolCall: number;
  /** Each tool result: call id and delimiters (the content is counted as text). */
  readonly perToolResult: number;
}

function argumentsText(input: unknown): string {
  return typeof input === "string" ? input : (JSON.stringify(input) ?? "");
}

function blockTokens(block: ContentBlock, costs: MessageCosts, countText: (text: string) => number): number {
  switch (block.type) {
    case "text":
      return countText(block.text);
    case "reasoning":
      return countText(block.text);
    case "tool-call":
      return costs.perToolCall + countText(block.name) + countText(argumentsText(block.input));
    case "tool-result": {
      let tokens = costs.perToolResult + countText(toolResultText(block.content));
      for (const attachment of block.attachments ?? []) {
        tokens +=
          attachment.type === "image"
            ? imageTokens(attachment, costs)
            : fileTokens(attachment, costs, countText);
      }
      return tokens;
    }
    case "image":
      return imageTokens(block, costs);
    case "file":
      return fileTokens(block, costs, countText);
    case "opaque":
      // A provider's own block (a server tool's call or result): what the model reads of it is unknown, so
      // its JSON is counted as text — an over-estimate for encrypted content, never an under-estimate.
      return countText(JSON.stringify(block.data));
  }
}

/**
 * Tokens of `message` as a provider bills it: `countText` over every text a model sees (text, reasoning,
 * tool names and JSON arguments, tool output), fixed costs for images and files, and the framing in
 * `costs`. Markers are never sent, so they cost nothing.
 *
 * @example
 * sumMessageTokens(message, costs, (text) => encoding.countTokens(text));
 */
export function sumMessageTokens(
  message: Message,
  costs: MessageCosts,
  countText: (text: string) => number,
): number {
  if (message.kind === "marker") return 0;
  // Withheld reasoning goes back to the provider opaque (encrypted); it weighs what the provider reported
  // producing, so when that figure is known it replaces the (summary) text of every withheld block.
  const reportedReasoning = message.usage?.reasoning;
  const useReported =
    reportedReasoning !== undefined &&
    message.content.some((block) => block.type === "reasoning" && block.redacted === true);
  let tokens = costs.perMessage + (useReported ? reportedReasoning : 0);
  for (const block of message.content) {
    if (useReported && block.type === "reasoning" && block.redacted === true) continue;
    tokens += blockTokens(block, costs, countText);
  }
  return tokens;
}
