import type { ContentBlock, Message } from "../../model/message.ts";

const messageKeys = [
  "id",
  "sessionId",
  "seq",
  "turn",
  "role",
  "content",
  "createdAt",
  "kind",
  "summaryOf",
  "tokens",
  "tokenizer",
  "model",
  "provider",
  "usage",
  "finishReason",
  "error",
  "completedAt",
  "metadata",
] as const;

const blockKeys: { readonly [Type in ContentBlock["type"]]: readonly string[] } = {
  text: ["type", "text", "refusal"],
  reasoning: ["type", "text", "signature", "signedBy", "redacted", "providerData"],
  "tool-call": ["type", "id", "name", "input"],
  "tool-result": [
    "type",
    "callId",
    "toolName",
    "content",
    "isError",
    "attachments",
    "compactSummary",
    "offloadRef",
  ],
  image: ["type", "mediaType", "data", "url", "ref", "detail"],
  file: ["type", "mediaType", "filename", "data", "url", "ref"],
  opaque: ["type", "provider", "data"],
};

/** Fields of a `conversation` record, in the order they are written. */
export const conversationRecordKeys = ["type", "id", "format", "source", "title", "sidechain", "metadata"];

const usageKeys = ["input", "output", "cacheRead", "cacheWrite", "cacheWriteLong", "reasoning"];
const summaryKeys = ["fromSeq", "toSeq", "messageCount"];

/**
 * A copy of `message` with its fields, blocks, usage and summary range in one fixed order, absent fields left
 * out. Free-form JSON (tool inputs, metadata, provider data) keeps its own key order. Serialising this gives
 * the same bytes however the message object was built, which makes export → import → export byte-identical.
 *
 * @example
 * JSON.stringify(orderedMessage(message));
 */
export function orderedMessage(message: Message): Record<string, unknown> {
  const ordered = pick(message, messageKeys);
  ordered["content"] = message.content.map(orderedBlock);
  if (message.usage) ordered["usage"] = pick(message.usage, usageKeys);
  if (message.summaryOf) ordered["summaryOf"] = pick(message.summaryOf, summaryKeys);
  return ordered;
}

function orderedBlock(block: ContentBlock): Record<string, unknown> {
  const ordered = pick(block, blockKeys[block.type]);
  if (block.type === "tool-result" && block.attachments) {
    ordered["attachments"] = block.attachments.map((attachment) =>
      pick(attachment, blockKeys[attachment.type]),
    );
  }
  return ordered;
}

/** `value`'s defined entries among `keys`, in the order of `keys`. */
export function pick(value: object, keys: readonly string[]): Record<string, unknown> {
  const source = value as Record<string, unknown>;
  const result: Record<string, unknown> = {};
  for (const key of keys) if (source[key] !== undefined) result[key] = source[key];
  return result;
}
