import type { Message } from "../model/message.ts";
import { groupTurns, type Turn } from "../model/turns.ts";

/**
 * A consistent, read-only view of a conversation at one moment. Taking one is O(1): it shares the
 * conversation's append-only storage and only remembers its length, so later writes never show through.
 */
export class ConversationSnapshot {
  readonly #backing: readonly Message[];
  readonly length: number;
  /** Increases with every write to the conversation; equal versions mean equal content. */
  readonly version: number;
  #messages: readonly Message[] | undefined;

  /** @internal Created by `Conversation.snapshot()`. */
  constructor(backing: readonly Message[], length: number, version: number) {
    this.#backing = backing;
    this.length = length;
    this.version = version;
  }

  /** The messages, as a frozen array (materialised on first access, then cached). */
  get messages(): readonly Message[] {
    this.#messages ??= Object.freeze(this.#backing.slice(0, this.length));
    return this.#messages;
  }

  /** The message at `index` (negative counts from the end), without materialising the array. */
  at(index: number): Message | undefined {
    const position = index < 0 ? this.length + index : index;
    return position >= 0 && position < this.length ? this.#backing[position] : undefined;
  }

  /** Messages from `start` to the end, copying only that tail. */
  tail(start: number): readonly Message[] {
    return this.#backing.slice(Math.max(0, start), this.length);
  }

  /** The messages grouped into turns. */
  turns(): Turn[] {
    return groupTurns(this.messages);
  }
}
