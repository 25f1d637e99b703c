/**
 * The messages a store wrote lately, by their place, so the drain that indexes their words (words-drain.ts) need
 * not parse the bodies it reads back: a row whose stored body is the very text written for a remembered message
 * takes that message's words. Anything else (another process's rows, a write rolled back and its place taken by
 * another) is parsed from its body. Bounded in places and in text (long bodies are not kept): the oldest are
 * forgotten first.
 */
import type { Message } from "../../model/message.ts";

/** Places remembered at most (a few drain batches). */
const CAPACITY = 2048;
/** Characters of body text remembered at most, all places together (bodies are held until drained). */
const MAX_TOTAL = 8 * 1024 * 1024;
/** A longer body is not remembered (the drain parses it). */
const MAX_BODY = 64 * 1024;

/**
 * Messages written lately, each with the body text stored for it.
 *
 * @example
 * bodies.remember("s1", 4, body, message);
 * bodies.take("s1", 4, bodyReadBack); // the message when the text is the same
 */
export class RecentBodies {
  readonly #entries = new Map<
    string,
    { readonly body: string; readonly message: Pick<Message, "content"> }
  >();
  #total = 0;

  remember(sessionId: string, seq: number, body: string, message: Pick<Message, "content">): void {
    if (body.length > MAX_BODY) return;
    const key = `${seq}\u0000${sessionId}`;
    this.#forget(key);
    this.#entries.set(key, { body, message });
    this.#total += body.length;
    while (this.#entries.size > CAPACITY || this.#total > MAX_TOTAL)
      this.#forget(this.#entries.keys().next().value!);
  }

  /** The message remembered at this place when `body` is the text written for it; forgets the place. */
  take(sessionId: string, seq: number, body: string): Pick<Message, "content"> | undefined {
    const key = `${seq}\u0000${sessionId}`;
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#forget(key);
    return entry.body === body ? entry.message : undefined;
  }

  #forget(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#total -= entry.body.length;
  }
}
