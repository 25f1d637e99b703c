import type { JsonValue, Message } from "../../../model/message.ts";
import type { ProviderOptions } from "./ai-sdk-types.ts";

/**
 * Metadata key under which a user message keeps the `providerOptions` of its content parts, and a tool message
 * those of its output's `content` parts: one entry per part, in order (`null` for a part without any), each
 * naming the kind of part it belongs to (`text`, or `file` for images and files). ctxkit's blocks have no field
 * for them; assistant parts carry theirs on a carrier block instead (see `partOptionsCarrier`).
 */
export const PART_OPTIONS_KEY = "aiSdk.partOptions";

/** Metadata key under which a tool message keeps its tool-result part's own `providerOptions`. */
export const RESULT_OPTIONS_KEY = "aiSdk.resultOptions";

/** Metadata key under which a tool message keeps the `providerOptions` of its result's `output`. */
export const OUTPUT_OPTIONS_KEY = "aiSdk.outputOptions";

/** The kind of AI SDK part an entry of `PART_OPTIONS_KEY` belongs to: a text, or a file (images included). */
type PartKind = "text" | "file";

/** One entry of `PART_OPTIONS_KEY`. */
type ProviderOptionsEntry = { part: PartKind; providerOptions: { [provider: string]: JsonValue } } | null;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function asOptions(value: unknown): ProviderOptions | undefined {
  return isRecord(value) && Object.values(value).every(isRecord) ? (value as ProviderOptions) : undefined;
}

const kindOf = (part: { readonly type: string }): PartKind => (part.type === "text" ? "text" : "file");

/**
 * `own` with `added` merged in provider by provider (`added` wins on a shared option), or `undefined` when both
 * are. Neither input is changed.
 *
 * @example
 * mergeProviderOptions({ openai: { imageDetail: "low" } }, { openai: { fileId: "f" }, x: {} });
 * // { openai: { imageDetail: "low", fileId: "f" }, x: {} }
 */
export function mergeProviderOptions(
  own: ProviderOptions | undefined,
  added: ProviderOptions | undefined,
): ProviderOptions | undefined {
  if (added === undefined) return own;
  if (own === undefined) return added;
  // Built with fromEntries, so a provider named `__proto__` stays an ordinary key.
  const providers = [...new Set([...Object.keys(own), ...Object.keys(added)])];
  return Object.fromEntries(
    providers.map((provider) => [
      provider,
      Object.fromEntries([
        ...Object.entries(Object.hasOwn(own, provider) ? own[provider]! : {}),
        ...Object.entries(Object.hasOwn(added, provider) ? added[provider]! : {}),
      ]),
    ]),
  );
}

/**
 * The `providerOptions` of an image part other than the detail level its image block keeps (`detail`, sent back
 * as `openai.imageDetail`); all of them for other parts or when the block took no detail from them.
 *
 * @example
 * withoutImageDetail({ openai: { imageDetail: "low", x: 1 } }, true); // { openai: { x: 1 } }
 */
export function withoutImageDetail(
  options: ProviderOptions | undefined,
  detailTaken: boolean,
): ProviderOptions | undefined {
  const openai = options?.["openai"];
  if (!detailTaken || options === undefined || openai === undefined) return options;
  const rest = Object.fromEntries(Object.entries(openai).filter(([key]) => key !== "imageDetail"));
  const others = Object.entries(options).filter(([provider]) => provider !== "openai");
  const kept = Object.keys(rest).length > 0 ? [...others, ["openai", rest] as const] : others;
  return kept.length > 0 ? Object.fromEntries(kept) : undefined;
}

/**
 * The metadata recording the `providerOptions` of `parts` (user content parts, or the parts of a tool output's
 * `content`) under `PART_OPTIONS_KEY`, less what `kept` says their blocks hold already; `undefined` when no part
 * has any left.
 *
 * @example
 * partOptionsMetadata([{ type: "text", providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } }]);
 * // { "aiSdk.partOptions": [{ part: "text", providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } }] }
 */
export function partOptionsMetadata(
  parts: readonly { readonly type: string; readonly providerOptions?: ProviderOptions | undefined }[],
  kept: (index: number, options: ProviderOptions) => ProviderOptions | undefined = (_, options) => options,
): { [PART_OPTIONS_KEY]: ProviderOptionsEntry[] } | undefined {
  const entries = parts.map((part, index): ProviderOptionsEntry => {
    const options = part.providerOptions === undefined ? undefined : kept(index, part.providerOptions);
    if (options === undefined) return null;
    return { part: kindOf(part), providerOptions: options as { [provider: string]: JsonValue } };
  });
  return entries.some((entry) => entry !== null) ? { [PART_OPTIONS_KEY]: entries } : undefined;
}

/**
 * `parts` with the `providerOptions` `message` recorded for them (see `partOptionsMetadata`) added to their own
 * (which win where both set an option).
 * The record applies only while it still fits: one entry per part, each only on the kind of part it was taken
 * from. When governance replaced an image with a text placeholder, the image's options are left out; when it
 * rewrote a result's text into another number of parts, all are — rather than put on another part.
 *
 * @example
 * withRecordedOptions([{ type: "text", text: "hi" }], message);
 * // [{ type: "text", text: "hi", providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } }]
 */
export function withRecordedOptions<
  Part extends { readonly type: string; providerOptions?: ProviderOptions },
>(parts: readonly Part[], message: Message): Part[] {
  const entries = message.metadata?.[PART_OPTIONS_KEY];
  if (!Array.isArray(entries) || entries.length !== parts.length) return [...parts];
  return parts.map((part, index) => {
    const entry = entries[index];
    if (!isRecord(entry) || entry["part"] !== kindOf(part)) return part;
    // The part's own options (an image's detail level, from its block as it is now) win over recorded ones.
    const providerOptions = mergeProviderOptions(asOptions(entry["providerOptions"]), part.providerOptions);
    return providerOptions === undefined ? part : { ...part, providerOptions };
  });
}

/** The provider options `message` keeps under `key` (`RESULT_OPTIONS_KEY`, `OUTPUT_OPTIONS_KEY`), if any. */
export function recordedOptions(message: Message, key: string): { providerOptions?: ProviderOptions } {
  const options = asOptions(message.metadata?.[key]);
  return options === undefined ? {} : { providerOptions: options };
}
