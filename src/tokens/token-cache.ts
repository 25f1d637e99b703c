import type { Message } from "../model/message.ts";
import type { TokenCounter } from "./token-counter.ts";

/**
 * Counts every message once per counter. A count is taken from the message itself (`tokens` made by the same
 * counter), else from this cache (by object identity), else from the counter — and only that last case
 * tokenises. `invocations` says how often it did, so tests and benchmarks can check that a request with no
 * new messages tokenises nothing.
 *
 * @example
 * const cache = new TokenCache(counter);
 * cache.total(history); // tokenises every message
 * cache.total([...history, reply]); // tokenises only `reply`
 * cache.invocations; // history.length + 1
 */
export class TokenCache {
  readonly counter: TokenCounter;
  readonly #counts = new WeakMap<Message, number>();
  #invocations = 0;

  constructor(counter: TokenCounter) {
    this.counter = counter;
  }

  /** How many messages this cache has sent to the counter. */
  get invocations(): number {
    return this.#invocations;
  }

  /** Tokens of `message`, tokenising it only the first time it is seen. */
  tokensOf(message: Message): number {
    if (message.tokens !== undefined && message.tokenizer === this.counter.name) return message.tokens;
    const cached = this.#counts.get(message);
    if (cached !== undefined) return cached;
    this.#invocations++;
    const tokens = this.counter.countMessage(message);
    this.#counts.set(message, tokens);
    return tokens;
  }

  /** `message` carrying its count (`tokens`, `tokenizer`), ready to store; the same object when it already does. */
  withCount<M extends Message>(message: M): M {
    if (message.tokens !== undefined && message.tokenizer === this.counter.name) return message;
    return Object.freeze({ ...message, tokens: this.tokensOf(message), tokenizer: this.counter.name });
  }

  /** Every message carrying its count (a new array; messages already counted are returned as they are). */
  withCounts<M extends Message>(messages: readonly M[]): M[] {
    return messages.map((message) => this.withCount(message));
  }

  /** Sum of the messages' tokens. */
  total(messages: readonly Message[]): number {
    let sum = 0;
    for (const message of messages) sum += this.tokensOf(message);
    return sum;
  }
}

/**
 * Wraps a counter and counts its calls, to prove in tests and benchmarks that only new content is tokenised.
 *
 * @example
 * const counting = new CountingTokenCounter(await createExactCounter("o200k_base"));
 * counting.countText("hi");
 * counting.invocations; // 1
 */
export class CountingTokenCounter implements TokenCounter {
  readonly inner: TokenCounter;
  messageCalls = 0;
  textCalls = 0;

  constructor(inner: TokenCounter) {
    this.inner = inner;
  }

  get name(): string {
    return this.inner.name;
  }

  /** Messages plus texts counted. */
  get invocations(): number {
    return this.messageCalls + this.textCalls;
  }

  countText(text: string): number {
    this.textCalls++;
    return this.inner.countText(text);
  }

  countMessage(message: Message): number {
    this.messageCalls++;
    return this.inner.countMessage(message);
  }
}
