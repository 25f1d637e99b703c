import { toolResultText } from "../../model/blocks.ts";
import { opensTurn } from "../../model/turns.ts";
import { messageTokens, type TokenCounter } from "../../tokens/token-counter.ts";
import type { ImportedConversation, TranscriptFormat } from "./imported-conversation.ts";
import { provisionalTokenCounter } from "./provisional-token-counter.ts";

/** Size figures of one conversation, as `ctxkit stats` prints them. */
export interface ConversationStats {
  readonly id: string;
  readonly format: TranscriptFormat;
  readonly messages: number;
  /** User turns: user messages that are instructions (not summaries or markers). */
  readonly turns: number;
  readonly toolCalls: number;
  /** Characters of tool output the model saw. */
  readonly toolResultChars: number;
  /** Tokens of all messages under the given counter. */
  readonly tokens: number;
}

/**
 * Counts messages, turns, tool calls, tool-output characters and tokens of a conversation.
 *
 * @example
 * conversationStats(conversation).toolCalls;
 * conversationStats(conversation, exactCounter).tokens;
 */
export function conversationStats(
  conversation: ImportedConversation,
  counter: TokenCounter = provisionalTokenCounter,
): ConversationStats {
  let turns = 0;
  let toolCalls = 0;
  let toolResultChars = 0;
  let tokens = 0;
  for (const message of conversation.messages) {
    if (opensTurn(message)) turns++;
    tokens += messageTokens(message, counter);
    for (const block of message.content) {
      if (block.type === "tool-call") toolCalls++;
      else if (block.type === "tool-result") toolResultChars += toolResultText(block.content).length;
    }
  }
  return {
    id: conversation.id,
    format: conversation.format,
    messages: conversation.messages.length,
    turns,
    toolCalls,
    toolResultChars,
    tokens,
  };
}
