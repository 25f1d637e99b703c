import { canonicalJson } from "../../../model/blocks.ts";
import type { JsonValue, ReasoningBlock } from "../../../model/message.ts";
import { extrasOf } from "../item-extras.ts";
import type { ResponsesReasoning } from "./openai-responses-item.ts";

type OpenAIMaterial = { [key: string]: JsonValue };

/**
 * The OpenAI material of a reasoning block, in the AI SDK's `providerOptions.openai` shape (`itemId`,
 * `reasoningEncryptedContent`, plus the item's other fields), or `undefined` for reasoning from elsewhere.
 */
export function openAIMaterial(block: ReasoningBlock): OpenAIMaterial | undefined {
  const data = block.providerData;
  if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined;
  const openai = data["openai"];
  if (typeof openai !== "object" || openai === null || Array.isArray(openai)) return undefined;
  return typeof openai["itemId"] === "string" || typeof openai["reasoningEncryptedContent"] === "string"
    ? openai
    : undefined;
}

const KNOWN = ["type", "id", "summary", "encrypted_content"];

/**
 * Reasoning blocks for a reasoning item: one per summary part (one empty block when there is none), each
 * carrying the item id and encrypted content in `providerData.openai` — the AI SDK's shape, so the blocks also
 * work with its OpenAI provider. An item with encrypted content and no summary text is `redacted`.
 */
export function reasoningBlocksOf(item: {
  id?: string | undefined;
  summary: readonly { text: string }[];
  encrypted_content?: string | null | undefined;
  [key: string]: unknown;
}): ReasoningBlock[] {
  const openai: OpenAIMaterial = {
    ...extrasOf(item, KNOWN),
    ...(item.id !== undefined && { itemId: item.id }),
    ...(typeof item.encrypted_content === "string" && { reasoningEncryptedContent: item.encrypted_content }),
  };
  const texts = item.summary.length === 0 ? [""] : item.summary.map((part) => part.text);
  const withheld = typeof item.encrypted_content === "string" && texts.every((text) => text === "");
  return texts.map((text) => ({
    type: "reasoning",
    text,
    ...(withheld && { redacted: true }),
    providerData: { openai },
  }));
}

/**
 * Reasoning items for consecutive reasoning blocks: blocks of one item (same `itemId`, or for items without an id
 * the same encrypted content and other fields) are merged back; blocks without OpenAI material are left out,
 * because OpenAI rejects reasoning it did not produce.
 */
export function reasoningItemsOf(blocks: readonly ReasoningBlock[]): ResponsesReasoning[] {
  const items: ResponsesReasoning[] = [];
  let previousId: string | undefined;
  let previousMaterial: OpenAIMaterial | undefined;
  for (const block of blocks) {
    const material = openAIMaterial(block);
    if (material === undefined) {
      previousId = undefined;
      previousMaterial = undefined;
      continue;
    }
    const { itemId, reasoningEncryptedContent, ...extras } = material;
    const id = typeof itemId === "string" ? itemId : undefined;
    const last = items.at(-1);
    // Blocks of one item share its id; an item without id is known by its (unique) encrypted content.
    const sameItem =
      id !== undefined
        ? id === previousId
        : previousId === undefined &&
          previousMaterial !== undefined &&
          canonicalJson(material) === canonicalJson(previousMaterial);
    previousMaterial = material;
    if (sameItem && last !== undefined) {
      // The item's first block had empty text and so no summary part; a second block needs it back.
      if (last.summary.length === 0) last.summary.push({ type: "summary_text", text: "" });
      last.summary.push({ type: "summary_text", text: block.text });
      continue;
    }
    previousId = id;
    items.push({
      ...extras,
      type: "reasoning",
      ...(id !== undefined && { id }),
      summary: block.text === "" ? [] : [{ type: "summary_text", text: block.text }],
      ...(typeof reasoningEncryptedContent === "string" && { encrypted_content: reasoningEncryptedContent }),
    });
  }
  return items;
}
