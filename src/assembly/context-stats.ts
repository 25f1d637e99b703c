import { toolResultText } from "../model/blocks.ts";
import type { Message, Role } from "../model/message.ts";

/** `/context`-style statistics of a message list. */
export interface ContextStats {
  readonly messages: number;
  readonly roles: Readonly<Record<Role, number>>;
  readonly characters: number;
  readonly tokens: number;
  /** Share of the usable window the messages (plus fixed tokens) take, 0–1+. */
  readonly windowUse: number;
}

function characters(message: Message): number {
  let count = 0;
  for (const block of message.content) {
    if (block.type === "text" || block.type === "reasoning") count += block.text.length;
    else if (block.type === "tool-call") count += JSON.stringify(block.input).length + block.name.length;
    else if (block.type === "tool-result") count += toolResultText(block.content).length;
  }
  return count;
}

/**
 * Counts messages, the role distribution, characters and tokens, and the share of the usable window used.
 *
 * @example
 * const stats = contextStats(view, governor.tokensOf, { usable: 180_000, fixedTokens: 2_500 });
 */
export function contextStats(
  messages: readonly Message[],
  tokensOf: (message: Message) => number,
  window: { usable: number; fixedTokens?: number },
): ContextStats {
  const roles: Record<Role, number> = { system: 0, user: 0, assistant: 0, tool: 0 };
  let chars = 0;
  let tokens = window.fixedTokens ?? 0;
  for (const message of messages) {
    roles[message.role]++;
    chars += characters(message);
    tokens += tokensOf(message);
  }
  return {
    messages: messages.length,
    roles,
    characters: chars,
    tokens,
    windowUse: window.usable > 0 ? tokens / window.usable : 0,
  };
}
