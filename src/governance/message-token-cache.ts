import type { Message } from "../model/message.ts";
import type { TokenCounter } from "../tokens/token-counter.ts";

/** Token counts of messages, each counted once (a message's own count is used when the counter made it). */
export class MessageTokenCache {
  readonly #counter: TokenCounter;
  readonly #counts = new WeakMap<Message, number>();
  #calls = 0;

  constructor(counter: TokenCounter) {
    this.#counter = counter;
  }

  /** How many times the counter ran. */
  get calls(): number {
    return this.#calls;
  }

  /** Tokens of one message, counted once and cached. */
  tokensOf = (message: Message): number => {
    if (message.tokens !== undefined && message.tokenizer === this.#counter.name) return message.tokens;
    const cached = this.#counts.get(message);
    if (cached !== undefined) return cached;
    this.#calls++;
    const count = this.#counter.countMessage(message);
    this.#counts.set(message, count);
    return count;
  };

  /** `tokensOf`, counted without stalling the event loop (new messages can be huge: one request's body). */
  async tokensOfAsync(message: Message): Promise<number> {
    const counter = this.#counter;
    const known =
      (message.tokens !== undefined && message.tokenizer === counter.name) || this.#counts.has(message);
    if (!known && counter.countMessageAsync !== undefined) {
      this.#calls++;
      this.#counts.set(message, await counter.countMessageAsync(message));
    }
    return this.tokensOf(message);
  }
}
