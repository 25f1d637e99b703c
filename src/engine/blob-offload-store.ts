import type { OffloadStore } from "../governance/offload-store.ts";
import type { BlobStore } from "../store/blob-store.ts";

/**
 * The session store's blobs seen as governance's offload store, for one session: offloaded outputs are
 * linked to the session (deleted with it) and survive restarts.
 *
 * @example
 * const offloadStore = sessionOffloadStore(store.blobs, "s1");
 */
export function sessionOffloadStore(blobs: BlobStore, sessionId: string): OffloadStore {
  return {
    putText: (content) => blobs.putText(sessionId, content, "text/plain"),
    getText: (ref, range) => blobs.getText(ref, range),
  };
}
