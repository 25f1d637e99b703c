import type { Message } from "../model/message.ts";
import type { PayloadSegment } from "./prompt-cache.ts";

/** 53 bits of FNV-1a over a string (two 32-bit lanes with different offsets), as base-36 text. */
function hashText(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x01000193) ^ (b >>> 13);
  }
  return (a >>> 0).toString(36) + ((b >>> 0) & 0x1fffff).toString(36);
}

/**
 * The hash of a prefix: the previous prefix's hash followed by one more segment's. Equal chains at position i
 * mean equal payloads up to i (barring a 53-bit collision).
 *
 * @example
 * chainHash(chainHash("", systemHash), messageHash)
 */
export function chainHash(previous: string, segment: string): string {
  return hashText(`${previous}|${segment}`);
}

const segments = new WeakMap<Message, PayloadSegment>();

/**
 * A message as a prompt cache sees it: the hash of what is sent (role and content, not ids or metadata), its
 * tokens and blocks. Made once per message object, so a payload that keeps its messages keeps its segments
 * (and `PromptCache` reuses their prefix chain).
 *
 * @example
 * const segment = messageSegment(message, counter.countMessage(message));
 */
export function messageSegment(message: Message, tokens: number): PayloadSegment {
  const known = segments.get(message);
  if (known !== undefined && known.tokens === tokens) return known;
  const segment = {
    hash: hashText(JSON.stringify([message.role, message.content])),
    tokens,
    blocks: message.content.length,
  };
  segments.set(message, segment);
  return segment;
}

const fixedSegments = new Map<string, PayloadSegment>();

/**
 * The system prompt and tool definitions as one segment, identified by `identity` (their text, or any stable
 * name when only their size is known, as in a replay).
 *
 * @example
 * fixedSegment("recorded system prompt and tools", 12_000)
 */
export function fixedSegment(identity: string, tokens: number): PayloadSegment {
  const key = `${identity}\u0000${tokens}`;
  let segment = fixedSegments.get(key);
  if (segment === undefined) {
    segment = { hash: hashText(key), tokens, blocks: 1 };
    if (fixedSegments.size > 1_000) fixedSegments.clear();
    fixedSegments.set(key, segment);
  }
  return segment;
}
