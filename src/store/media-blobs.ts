/**
 * Keeps large binary parts (images, screenshots, files) out of message rows: inline base64 data above a limit
 * moves to the blob store and the block keeps a `ref`; `inlineMedia` puts the data back when a caller needs it.
 */
import type { ContentBlock, FileBlock, ImageBlock, Message } from "../model/message.ts";
import { blobRef, type BlobStore } from "./blob-store.ts";
import type { BlobData } from "./session-store.ts";

/** Default: base64 data longer than this many characters is moved to the blob store. */
export const DEFAULT_INLINE_MEDIA_LIMIT = 1024;

const encoder = new TextEncoder();

/**
 * A blob made of text.
 *
 * @example
 * textBlob("full tool output").ref; // "blob:…"
 */
export function textBlob(text: string, mediaType = "text/plain"): BlobData {
  const bytes = encoder.encode(text);
  return { ref: blobRef(bytes), mediaType, isText: true, bytes };
}

/**
 * A blob made of bytes.
 *
 * @example
 * bytesBlob(pngBytes, "image/png").ref;
 */
export function bytesBlob(bytes: Uint8Array, mediaType: string): BlobData {
  return { ref: blobRef(bytes), mediaType, isText: false, bytes };
}

/** Base64 text as bytes when it decodes and re-encodes to itself; otherwise kept as text (lossless). */
function base64Blob(data: string, mediaType: string): BlobData {
  const bytes = Buffer.from(data, "base64");
  if (bytes.toString("base64") === data) return bytesBlob(new Uint8Array(bytes), mediaType);
  return textBlob(data, mediaType);
}

type Media = ImageBlock | FileBlock;

function externalizeBlock<Block extends Media>(block: Block, limit: number, found: BlobData[]): Block {
  if (block.data === undefined || block.ref !== undefined || block.data.length <= limit) return block;
  const blob = base64Blob(block.data, block.mediaType);
  found.push(blob);
  const { data: _data, ...rest } = block;
  return { ...rest, ref: blob.ref } as Block;
}

/**
 * A copy of `message` whose large inline media are replaced by blob references, and the blobs to store.
 * Returns the message itself when nothing moved.
 *
 * @example
 * const { message: stored, blobs } = externalizeMedia(message, 1024);
 */
export function externalizeMedia(message: Message, limit: number): { message: Message; blobs: BlobData[] } {
  const blobs: BlobData[] = [];
  const content = message.content.map((block): ContentBlock => {
    if (block.type === "image" || block.type === "file") return externalizeBlock(block, limit, blobs);
    if (block.type !== "tool-result" || !block.attachments) return block;
    return { ...block, attachments: block.attachments.map((item) => externalizeBlock(item, limit, blobs)) };
  });
  return blobs.length === 0 ? { message, blobs } : { message: { ...message, content }, blobs };
}

async function inlineBlock<Block extends Media>(block: Block, blobs: BlobStore): Promise<Block> {
  if (block.ref === undefined || block.data !== undefined) return block;
  const info = await blobs.stat(block.ref);
  if (!info) return block;
  const data = info.isText
    ? await blobs.getText(block.ref)
    : Buffer.from((await blobs.getBytes(block.ref)) ?? []).toString("base64");
  if (data === undefined) return block;
  const { ref: _ref, ...rest } = block;
  return { ...rest, data } as Block;
}

/**
 * Copies of `messages` with every media block that refers to a stored blob given its data back (and its `ref`
 * removed), as it was before `externalizeMedia`. Unknown references are left as they are.
 *
 * @example
 * const sendable = await inlineMedia(await store.loadMessages(id), store.blobs);
 */
export async function inlineMedia(messages: readonly Message[], blobs: BlobStore): Promise<Message[]> {
  const result: Message[] = [];
  for (const message of messages) {
    if (!message.content.some(hasMediaRef)) {
      result.push(message);
      continue;
    }
    const content: ContentBlock[] = [];
    for (const block of message.content) {
      if (block.type === "image" || block.type === "file") content.push(await inlineBlock(block, blobs));
      else if (block.type === "tool-result" && block.attachments) {
        const attachments: Media[] = [];
        for (const item of block.attachments) attachments.push(await inlineBlock(item, blobs));
        content.push({ ...block, attachments });
      } else content.push(block);
    }
    result.push({ ...message, content });
  }
  return result;
}

function hasMediaRef(block: ContentBlock): boolean {
  if (block.type === "image" || block.type === "file") return block.ref !== undefined;
  return block.type === "tool-result" && (block.attachments ?? []).some((item) => item.ref !== undefined);
}
