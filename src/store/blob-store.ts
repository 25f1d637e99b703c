/**
 * Content-addressed storage for offloaded tool outputs and media, beside every session store. A blob is stored
 * once however many sessions link it; deleting a session unlinks its blobs and removes the ones nobody links.
 */
import { createHash } from "node:crypto";

/** What a store knows about a blob without reading it. */
export interface BlobInfo {
  /** `blob:` followed by the SHA-256 of the bytes, in hex. */
  readonly ref: string;
  readonly mediaType: string;
  /** Size in bytes. */
  readonly size: number;
  /** True when stored with `putText`. */
  readonly isText: boolean;
}

/** A slice to read: `offset` and `limit` count characters for `getText`, bytes for `getBytes`. */
export interface BlobRange {
  readonly offset?: number;
  readonly limit?: number;
}

/**
 * Blob storage linked to sessions.
 *
 * @example
 * const ref = await store.blobs.putText("s1", hugeToolOutput);
 * const firstPage = await store.blobs.getText(ref, { offset: 0, limit: 8000 });
 */
export interface BlobStore {
  /** Stores text (UTF-8) for a session and returns its reference. Equal content gives the same reference. */
  putText(sessionId: string, text: string, mediaType?: string): Promise<string>;
  /** Stores bytes (an image, a file) for a session and returns its reference. */
  putBytes(sessionId: string, bytes: Uint8Array, mediaType: string): Promise<string>;
  /** A slice of a blob as text (offsets in UTF-16 code units, as `String.prototype.slice`). */
  getText(ref: string, range?: BlobRange): Promise<string | undefined>;
  /** A slice of a blob's bytes. */
  getBytes(ref: string, range?: BlobRange): Promise<Uint8Array | undefined>;
  stat(ref: string): Promise<BlobInfo | undefined>;
  /** Blobs linked to a session, by ref. */
  list(sessionId: string): Promise<BlobInfo[]>;
  /** Unlinks a blob from a session; it is removed once no session links it. False when it was not linked. */
  delete(sessionId: string, ref: string): Promise<boolean>;
}

const REF_PATTERN = /^blob:[0-9a-f]{64}$/;
const utf8 = new TextEncoder();

/**
 * The reference of some bytes: `blob:<sha256 hex>`.
 *
 * @example
 * blobRef(new TextEncoder().encode("hello")); // "blob:2cf24dba…"
 */
export function blobRef(bytes: Uint8Array): string {
  return `blob:${createHash("sha256").update(bytes).digest("hex")}`;
}

/**
 * True when `value` looks like a reference this module creates.
 *
 * @example
 * isBlobRef("blob:" + "0".repeat(64)); // true
 */
export function isBlobRef(value: string): boolean {
  return REF_PATTERN.test(value);
}

/**
 * Slices text as `String.prototype.slice` does with an offset and a length.
 *
 * @example
 * sliceText("abcdef", { offset: 2, limit: 3 }); // "cde"
 */
export function sliceText(text: string, range: BlobRange = {}): string {
  const offset = Math.max(0, range.offset ?? 0);
  return text.slice(offset, range.limit === undefined ? undefined : offset + Math.max(0, range.limit));
}

/**
 * Slices bytes with an offset and a length (a copy).
 *
 * @example
 * sliceBytes(new Uint8Array([1, 2, 3]), { offset: 1 }); // Uint8Array [2, 3]
 */
export function sliceBytes(bytes: Uint8Array, range: BlobRange = {}): Uint8Array {
  const offset = Math.max(0, range.offset ?? 0);
  return bytes.slice(offset, range.limit === undefined ? undefined : offset + Math.max(0, range.limit));
}

/** The governance module's offload store shape (declared here so the store does not import governance). */
export interface SessionOffloadStore {
  putText(content: string): Promise<string>;
  getText(ref: string, range?: { offset?: number; limit?: number }): Promise<string | undefined>;
  /** The reference ctxkit's blob stores give `content` as text (`blobRef` of its UTF-8), nothing stored. */
  refFor(content: string): string;
}

/**
 * A blob store bound to one session, in the shape governance's `offloadStore` option expects, so offloaded
 * tool outputs land in the session's database and are deleted with it.
 *
 * @example
 * new Governor({ ...options, offloadStore: sessionOffloadStore(store.blobs, sessionId) });
 */
export function sessionOffloadStore(blobs: BlobStore, sessionId: string): SessionOffloadStore {
  return {
    putText: (content) => blobs.putText(sessionId, content),
    getText: (ref, range) => blobs.getText(ref, range),
    refFor: (content) => blobRef(utf8.encode(content)),
  };
}
