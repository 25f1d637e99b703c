/**
 * The blobs a restored session's media refer to. A dump normally carries them (an export writes a blob line
 * for each); one that does not may still be restored when the store or another dump of the batch holds them,
 * and is refused otherwise, since its images and files would be lost.
 */
import { MissingBlobError } from "../errors/errors.ts";
import type { ContentBlock, Message } from "../model/message.ts";
import type { BlobData, SessionDump } from "./session-store.ts";

/** Finds a stored blob by ref (inside the restoring transaction for a database). */
export type BlobLookup = (ref: string) => Promise<BlobData | undefined> | BlobData | undefined;

function blockRefs(block: ContentBlock): string[] {
  if (block.type === "image" || block.type === "file") return block.ref === undefined ? [] : [block.ref];
  if (block.type !== "tool-result") return [];
  return (block.attachments ?? []).flatMap((item) => (item.ref === undefined ? [] : [item.ref]));
}

/**
 * The blob references of a message's media: images, files and tool-result attachments.
 *
 * @example
 * mediaRefs(message); // ["blob:9f86…"]
 */
export function mediaRefs(message: Message): string[] {
  return message.content.flatMap(blockRefs);
}

/**
 * The dumps, each given the blobs its rows refer to but it does not carry: taken from another dump of the batch,
 * else read from the store with `lookup` (so they are linked to the restored session and stay when a replaced
 * session or the session that held them is deleted). Throws `MissingBlobError` for the first reference found
 * nowhere; call it before writing anything.
 *
 * @example
 * const complete = await withReferencedBlobs(checked, (ref) => blobs.get(ref));
 */
export async function withReferencedBlobs(
  dumps: readonly SessionDump[],
  lookup: BlobLookup,
): Promise<SessionDump[]> {
  const batch = new Map<string, BlobData>();
  for (const dump of dumps) for (const blob of dump.blobs) batch.set(blob.ref, blob);
  const complete: SessionDump[] = [];
  for (const dump of dumps) {
    const carried = new Set(dump.blobs.map((blob) => blob.ref));
    const added: BlobData[] = [];
    for (const row of dump.rows) {
      for (const ref of mediaRefs(row.message)) {
        if (carried.has(ref)) continue;
        const blob = batch.get(ref) ?? (await lookup(ref));
        if (blob === undefined) throw new MissingBlobError(dump.session.id, row.message.seq, ref);
        carried.add(ref);
        added.push(blob);
      }
    }
    complete.push(added.length === 0 ? dump : { ...dump, blobs: [...dump.blobs, ...added] });
  }
  return complete;
}
