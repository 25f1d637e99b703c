import type { JsonValue, Message } from "../../../model/message.ts";
import type { ItemExtras } from "./openai-responses-item.ts";

/** Metadata key under which a message keeps the extra fields of the Responses items it came from. */
export const ITEM_EXTRAS_KEY = "openai.items";

/**
 * The fields of `item` other than `known` (and other than `undefined`/`null` ones), or `undefined` when there are
 * none. Keeping them (`id`, `status`, `phase`, …) lets an imported payload be sent back unchanged.
 *
 * @example
 * extrasOf({ type: "function_call", call_id: "c", name: "f", arguments: "{}", id: "fc_1" }, ["type", "call_id", "name", "arguments"]);
 * // { id: "fc_1" }
 */
export function extrasOf(
  item: Readonly<Record<string, unknown>>,
  known: readonly string[],
): ItemExtras | undefined {
  const extras: ItemExtras = {};
  for (const [key, value] of Object.entries(item))
    if (!known.includes(key) && value !== undefined && value !== null) extras[key] = value as JsonValue;
  return Object.keys(extras).length > 0 ? extras : undefined;
}

/** The extras a message keeps for the item named `key` (`call:<id>`, `message:<n>`, `output`). */
export function storedExtras(message: Message, key: string): ItemExtras {
  const stored = message.metadata?.[ITEM_EXTRAS_KEY];
  if (typeof stored !== "object" || stored === null || Array.isArray(stored)) return {};
  const extras = stored[key];
  return typeof extras === "object" && extras !== null && !Array.isArray(extras) ? extras : {};
}

/** Collects the extras of the items that make up one message, for its `metadata`. */
export class ExtrasCollector {
  readonly #items: Record<string, ItemExtras> = {};

  /** Records `extras` under `key` when there are any. */
  add(key: string, extras: ItemExtras | undefined): void {
    if (extras !== undefined) this.#items[key] = extras;
  }

  /** The metadata to put on the message (`undefined` when no item had extras). */
  metadata(base: Message["metadata"] = undefined): Message["metadata"] {
    if (Object.keys(this.#items).length === 0) return base;
    return { ...base, [ITEM_EXTRAS_KEY]: this.#items };
  }
}
