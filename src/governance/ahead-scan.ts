import type { Message } from "../model/message.ts";
import type { OffloadStore } from "./offload-store.ts";

/** Replacements made ahead per request at most (`AheadScan.build`). */
const AHEAD_PER_REQUEST = 2;
/** Messages looked at past the protection window for them. */
export const AHEAD_LOOKBACK = 32;
/** Messages looked at, at most, for the end of the protection window (`newestUnprotected`'s `lookAt`). */
export const AHEAD_WALK = 256;

/**
 * The work a rewriting processor prepares ahead (`Processor.prepareAhead`): from the newest message out of the
 * protection window back, the messages of one role not looked at yet, a couple per request. What was looked at is
 * kept per offload store, since the references a store gives go into what is made (a preview governor's store
 * names outputs differently from the session's).
 *
 * @example
 * const ahead = new AheadScan();
 * const made = await ahead.build(view, newestUnprotected(view, traffic, protect, AHEAD_WALK), store, "tool", make);
 */
export class AheadScan {
  readonly #lookedBy = new WeakMap<OffloadStore, WeakSet<Message>>();

  /**
   * What `make` gives for the messages of `role` from `from` back (each asked once per store), at most a couple;
   * `make` answers undefined for a message with nothing to prepare.
   */
  async build(
    messages: readonly Message[],
    from: number,
    store: OffloadStore,
    role: Message["role"],
    make: (message: Message, index: number) => Promise<Message | undefined>,
  ): Promise<Message[]> {
    const looked = this.#lookedBy.get(store) ?? this.#lookedBy.set(store, new WeakSet()).get(store)!;
    const built: Message[] = [];
    for (let index = from; index >= 0 && index > from - AHEAD_LOOKBACK; index--) {
      if (built.length >= AHEAD_PER_REQUEST) break;
      const message = messages[index]!;
      if (message.role !== role || looked.has(message)) continue;
      looked.add(message);
      const made = await make(message, index);
      if (made !== undefined) built.push(made);
    }
    return built;
  }
}
