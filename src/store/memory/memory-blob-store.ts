import { sliceBytes, sliceText, type BlobInfo, type BlobRange, type BlobStore } from "../blob-store.ts";
import { bytesBlob, textBlob } from "../media-blobs.ts";
import type { BlobData } from "../session-store.ts";

const decoder = new TextDecoder();

const infoOf = (blob: BlobData): BlobInfo => ({
  ref: blob.ref,
  mediaType: blob.mediaType,
  size: blob.bytes.length,
  isText: blob.isText,
});

/**
 * Blobs held in process memory, linked to sessions; the blob side of `MemorySessionStore`.
 *
 * @example
 * const blobs = new MemoryBlobStore();
 * const ref = await blobs.putText("s1", "long output");
 */
export class MemoryBlobStore implements BlobStore {
  readonly #blobs = new Map<string, BlobData>();
  readonly #links = new Map<string, Set<string>>();

  async putText(sessionId: string, text: string, mediaType = "text/plain"): Promise<string> {
    return this.add(sessionId, textBlob(text, mediaType));
  }

  async putBytes(sessionId: string, bytes: Uint8Array, mediaType: string): Promise<string> {
    return this.add(sessionId, bytesBlob(new Uint8Array(bytes), mediaType));
  }

  async getText(ref: string, range?: BlobRange): Promise<string | undefined> {
    const blob = this.#blobs.get(ref);
    return blob && sliceText(decoder.decode(blob.bytes), range);
  }

  async getBytes(ref: string, range?: BlobRange): Promise<Uint8Array | undefined> {
    const blob = this.#blobs.get(ref);
    return blob && sliceBytes(blob.bytes, range);
  }

  async stat(ref: string): Promise<BlobInfo | undefined> {
    const blob = this.#blobs.get(ref);
    return blob && infoOf(blob);
  }

  async list(sessionId: string): Promise<BlobInfo[]> {
    return this.dataOf(sessionId).map(infoOf);
  }

  async delete(sessionId: string, ref: string): Promise<boolean> {
    const linked = this.#links.get(sessionId)?.delete(ref) ?? false;
    this.#collect([ref]);
    return linked;
  }

  /** @internal Stores a blob (the first writer's media type wins) and links it. Synchronous for atomicity. */
  add(sessionId: string, blob: BlobData): string {
    if (!this.#blobs.has(blob.ref)) this.#blobs.set(blob.ref, blob);
    let links = this.#links.get(sessionId);
    if (!links) this.#links.set(sessionId, (links = new Set()));
    links.add(blob.ref);
    return blob.ref;
  }

  /** @internal A stored blob, whichever sessions link it. */
  blob(ref: string): BlobData | undefined {
    return this.#blobs.get(ref);
  }

  /** @internal The blobs linked to a session, by ref. */
  dataOf(sessionId: string): BlobData[] {
    return [...(this.#links.get(sessionId) ?? [])]
      .sort()
      .map((ref) => this.#blobs.get(ref))
      .filter((blob): blob is BlobData => blob !== undefined);
  }

  /** @internal Copies a session's links to another session (fork). */
  copyLinks(fromSessionId: string, toSessionId: string): void {
    for (const blob of this.dataOf(fromSessionId)) this.add(toSessionId, blob);
  }

  /** @internal Unlinks every blob of a session; returns how many blobs were removed. */
  unlinkSession(sessionId: string): number {
    const refs = [...(this.#links.get(sessionId) ?? [])];
    this.#links.delete(sessionId);
    return this.#collect(refs);
  }

  /** @internal Removes links of sessions not in `live` and every unlinked blob. */
  collectGarbage(live: (sessionId: string) => boolean): number {
    for (const sessionId of [...this.#links.keys()]) if (!live(sessionId)) this.#links.delete(sessionId);
    return this.#collect([...this.#blobs.keys()]);
  }

  #collect(refs: readonly string[]): number {
    const used = new Set<string>();
    for (const links of this.#links.values()) for (const ref of links) used.add(ref);
    let removed = 0;
    for (const ref of refs) if (!used.has(ref) && this.#blobs.delete(ref)) removed++;
    return removed;
  }
}
