import type { ContentBlock, JsonValue, ReasoningBlock } from "../../model/message.ts";

/** A JSON object keyed by provider, like the AI SDK's `providerOptions` (`{ google: { thoughtSignature } }`). */
export type PartOptions = { readonly [provider: string]: { readonly [key: string]: JsonValue } };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * An empty reasoning block carrying provider material that belongs to the NEXT block of the same assistant
 * message: Gemini's `thoughtSignature` on a text or function-call part, or an AI SDK part's `providerOptions`.
 * ctxkit's text and tool-call blocks have no field for it, and the material is reasoning state, so it travels
 * as a reasoning block right before the block it signs. Formats without per-part material skip carriers.
 *
 * @example
 * partOptionsCarrier({ google: { thoughtSignature: "c2ln" } });
 * // { type: "reasoning", text: "", providerData: { partOptions: { google: { thoughtSignature: "c2ln" } } } }
 */
export function partOptionsCarrier(options: PartOptions): ReasoningBlock {
  return { type: "reasoning", text: "", providerData: { partOptions: options } };
}

/** The provider material a carrier block holds, or `undefined` when `block` is not a carrier. */
export function carriedPartOptions(block: ContentBlock): PartOptions | undefined {
  if (block.type !== "reasoning" || block.text !== "" || block.signature !== undefined) return undefined;
  if (block.redacted !== undefined || !isRecord(block.providerData)) return undefined;
  const keys = Object.keys(block.providerData);
  const options = block.providerData["partOptions"];
  if (keys.length !== 1 || !isRecord(options)) return undefined;
  return Object.values(options).every(isRecord) ? (options as PartOptions) : undefined;
}

/** True when `block` is a part-options carrier (see `partOptionsCarrier`). */
export function isPartOptionsCarrier(block: ContentBlock): boolean {
  return carriedPartOptions(block) !== undefined;
}

/**
 * Pairs each block of an assistant message with the provider material a carrier right before it holds, dropping
 * the carriers themselves. A carrier with nothing after it is dropped.
 *
 * @example
 * withPartOptions([carrier, toolCall]); // [{ block: toolCall, options: { google: { thoughtSignature } } }]
 */
export function withPartOptions(
  blocks: readonly ContentBlock[],
): { block: ContentBlock; options: PartOptions | undefined }[] {
  const result: { block: ContentBlock; options: PartOptions | undefined }[] = [];
  let pending: PartOptions | undefined;
  for (const block of blocks) {
    const carried = carriedPartOptions(block);
    if (carried !== undefined) {
      pending = carried;
      continue;
    }
    result.push({ block, options: pending });
    pending = undefined;
  }
  return result;
}
