import type { Message } from "../model/message.ts";

/**
 * Counts tokens. Implementations: exact OpenAI encodings (`gpt-tokenizer`) and a calibrated estimator for
 * other model families. `name` identifies the counter so a cached count made by another counter is recounted.
 */
export interface TokenCounter {
  /** Stable name, e.g. `o200k_base` or `estimate:claude@1`. Stored beside cached counts. */
  readonly name: string;
  /** Tokens of a plain string. */
  countText(text: string): number;
  /** Tokens of a whole message as a provider bills it: content plus per-message overhead. */
  countMessage(message: Message): number;
}

/**
 * Tokens of `message` under `counter`, using the count cached on the message when the same counter made it.
 * Callers that keep the count (stores, governance) write it back so every message is tokenised once.
 */
export function messageTokens(message: Message, counter: TokenCounter): number {
  if (message.tokens !== undefined && message.tokenizer === counter.name) return message.tokens;
  return counter.countMessage(message);
}

/** Returns `message` carrying its token count under `counter` (the same object when already cached). */
export function withTokenCount<M extends Message>(message: M, counter: TokenCounter): M {
  if (message.tokens !== undefined && message.tokenizer === counter.name) return message;
  return Object.freeze({ ...message, tokens: counter.countMessage(message), tokenizer: counter.name });
}
