import type { JsonValue, Message } from "../../model/message.ts";

/** Fields of a provider item or block that a converter does not interpret, kept so they go back as-is. */
export type ItemExtras = { [key: string]: JsonValue };

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

/**
 * The extras `message` keeps under `metadataKey` for the item named `key` (for example `call:<id>`).
 *
 * @example
 * storedExtras(message, "openai.items", "call:call_1"); // { id: "fc_1", status: "completed" }
 */
export function storedExtras(message: Message, metadataKey: string, key: string): ItemExtras {
  const stored = message.metadata?.[metadataKey];
  if (typeof stored !== "object" || stored === null || Array.isArray(stored)) return {};
  const extras = stored[key];
  return typeof extras === "object" && extras !== null && !Array.isArray(extras) ? extras : {};
}

/** Collects the extras of the items that make up one message, for its `metadata` under one key. */
export class ExtrasCollector {
  readonly #metadataKey: string;
  readonly #items: Record<string, ItemExtras> = {};

  constructor(metadataKey: string) {
    this.#metadataKey = metadataKey;
  }

  /** Records `extras` under `key` when there are any. */
  add(key: string, extras: ItemExtras | undefined): void {
    if (extras !== undefined) this.#items[key] = extras;
  }

  /** The metadata to put on the message (`undefined` when no item had extras). */
  metadata(base: Message["metadata"] = undefined): Message["metadata"] {
    if (Object.keys(this.#items).length === 0) return base;
    return { ...base, [this.#metadataKey]: this.#items };
  }
}
