import type { ContentBlock, Message } from "../model/message.ts";
import type { GovernanceEvent } from "./events.ts";
import { sumTokens, type ProcessorContext } from "./processor.ts";

/**
 * A copy of `message` with new content. The cached token count is dropped (the content changed), every other
 * field — id, seq, turn, role — is kept so the message still stands where it stood.
 */
export function withContent(message: Message, content: readonly ContentBlock[]): Message {
  const { tokens: _tokens, tokenizer: _tokenizer, ...rest } = message;
  return Object.freeze({ ...rest, content: Object.freeze([...content]) });
}

/** The outcome of `mapMessages`: the new list, and the originals with their replacements, pairwise. */
export interface Rewrite {
  readonly messages: readonly Message[];
  readonly originals: readonly Message[];
  readonly replacements: readonly Message[];
}

/**
 * Maps `messages` through `change`, which returns a replacement or undefined (unchanged). Returns the input
 * array itself when nothing changed, so callers can detect no-ops by identity.
 */
export function mapMessages(
  messages: readonly Message[],
  change: (message: Message, index: number) => Message | undefined,
): Rewrite {
  let output: Message[] | undefined;
  const originals: Message[] = [];
  const replacements: Message[] = [];
  messages.forEach((message, index) => {
    const replacement = change(message, index);
    if (replacement === undefined || replacement === message) {
      output?.push(message);
      return;
    }
    output ??= messages.slice(0, index);
    output.push(replacement);
    originals.push(message);
    replacements.push(replacement);
  });
  return { messages: output ?? messages, originals, replacements };
}

type RewriteEventType = Extract<
  GovernanceEvent,
  {
    type:
      | "reasoning-stripped"
      | "binaries-replaced"
      | "compact-summaries-used"
      | "tool-output-truncated"
      | "tool-inputs-elided";
  }
>["type"];

/** Emits the event describing a rewrite (tokens of the originals before, of the replacements after). */
export function reportRewrite(context: ProcessorContext, type: RewriteEventType, rewrite: Rewrite): void {
  if (rewrite.originals.length === 0) return;
  context.emit({
    type,
    tokensBefore: sumTokens(rewrite.originals, context.tokensOf),
    tokensAfter: sumTokens(rewrite.replacements, context.tokensOf),
    messageIds: rewrite.originals.map((message) => message.id),
  });
}
