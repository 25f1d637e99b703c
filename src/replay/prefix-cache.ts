import type { Message } from "../model/message.ts";

/**
 * Simulates a provider's prompt cache across consecutive requests: the cached part of a request is the longest
 * prefix, message by message, byte-identical to the previous request's payload. Comparison is by serialised
 * message, and only the messages up to the first difference are compared — work per request is proportional
 * to the payload, with a fast path by object identity.
 */
export class PrefixCache {
  #previous: readonly Message[] = [];
  #previousKeys: string[] = [];

  /** Returns how many leading messages of `messages` the previous request already had, then remembers them. */
  observe(messages: readonly Message[]): number {
    const keys: string[] = [];
    let common = 0;
    let matching = true;
    for (let index = 0; index < messages.length; index++) {
      const message = messages[index]!;
      const same = matching && this.#previous[index] === message;
      const key = same ? this.#previousKeys[index]! : serialise(message);
      keys.push(key);
      if (matching && (same || key === this.#previousKeys[index])) common++;
      else matching = false;
    }
    this.#previous = messages;
    this.#previousKeys = keys;
    return common;
  }
}

function serialise(message: Message): string {
  return JSON.stringify([message.role, message.content]);
}
