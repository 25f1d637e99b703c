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
  /**
   * The same count as `countText`, made without stalling the event loop for long: slow counters (the exact
   * ones) implement it and let other work run every few milliseconds. Leave it out when `countText` is fast on
   * any text.
   */
  countTextAsync?(text: string): Promise<number>;
  /** The same count as `countMessage`, made as `countTextAsync` makes it. */
  countMessageAsync?(message: Message): Promise<number>;
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

/**
 * `messageTokens` for code that must stay responsive (a server ingesting a request): counts with the counter's
 * `countMessageAsync` when it has one.
 *
 * @example
 * const tokens = await messageTokensAsync(message, counter);
 */
export async function messageTokensAsync(message: Message, counter: TokenCounter): Promise<number> {
  if (message.tokens !== undefined && message.tokenizer === counter.name) return message.tokens;
  return counter.countMessageAsync === undefined
    ? counter.countMessage(message)
    : counter.countMessageAsync(message);
}

/**
 * `counter.countText(text)`, counted with the counter's `countTextAsync` when it has one.
 *
 * @example
 * const fixed = await textTokensAsync(JSON.stringify(tools), counter);
 */
export async function textTokensAsync(text: string, counter: TokenCounter): Promise<number> {
  return counter.countTextAsync === undefined ? counter.countText(text) : counter.countTextAsync(text);
}
