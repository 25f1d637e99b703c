import type { Message } from "../model/message.ts";

/**
 * The replacements one processor made, by the message each replaced. A fold run again over the same messages —
 * an optional checkpoint thrown away because it did not pay for its cache rewrite, then considered again a few
 * requests later — gets the same replacement objects back: nothing is rebuilt (previews, notices) and nothing is
 * counted again (a governor counts each message object once). `key` names whatever else a replacement depends on
 * besides the message and the processor's options (an offload reference, the recall flag, a token budget); a
 * different key makes it anew. Replacements are immutable, so one object may serve several governors.
 *
 * @example
 * const memo = new RewriteMemo();
 * const stripped = memo.get(message) ?? memo.set(message, withContent(message, withoutReasoning));
 */
export class RewriteMemo {
  readonly #made = new WeakMap<Message, { readonly key: string; readonly replacement: Message }>();

  /** The replacement made for `original` under `key`, if any. */
  get(original: Message, key = ""): Message | undefined {
    const made = this.#made.get(original);
    return made?.key === key ? made.replacement : undefined;
  }

  /** Remembers `replacement` as what `original` became under `key`; returns it. */
  set(original: Message, replacement: Message, key = ""): Message {
    this.#made.set(original, { key, replacement });
    return replacement;
  }
}
