import { sliceText, type BlobInfo, type BlobRange, type BlobStore } from "../blob-store.ts";
import { bytesBlob, textBlob } from "../media-blobs.ts";
import type { SqliteDatabase } from "./sqlite-database.ts";
import { collectBlobs, insertBlob } from "./sqlite-rows.ts";

interface InfoRow {
  readonly ref: string;
  readonly media_type: string;
  readonly size: number;
  readonly is_text: number;
}

const infoOf = (row: InfoRow): BlobInfo => ({
  ref: row.ref,
  mediaType: row.media_type,
  size: row.size,
  isText: row.is_text === 1,
});

const decoder = new TextDecoder();

/**
 * Blobs in the `blobs` table of a ctxkit SQLite database, linked to sessions by `blob_links`. Byte ranges are
 * read with `substr` in SQLite, so a page of a large blob does not load the whole blob.
 *
 * @example
 * const ref = await store.blobs.putText("s1", output);
 */
export class SqliteBlobStore implements BlobStore {
  readonly #database: SqliteDatabase;

  constructor(database: SqliteDatabase) {
    this.#database = database;
  }

  async putText(sessionId: string, text: string, mediaType = "text/plain"): Promise<string> {
    const blob = textBlob(text, mediaType);
    this.#database.write(() => insertBlob(this.#database, sessionId, blob));
    return blob.ref;
  }

  async putBytes(sessionId: string, bytes: Uint8Array, mediaType: string): Promise<string> {
    const blob = bytesBlob(bytes, mediaType);
    this.#database.write(() => insertBlob(this.#database, sessionId, blob));
    return blob.ref;
  }

  async getText(ref: string, range?: BlobRange): Promise<string | undefined> {
    const row = this.#database.read(() =>
      this.#database.get<{ content: Uint8Array }>("SELECT content FROM blobs WHERE ref = ?", ref),
    );
    return row && sliceText(decoder.decode(row.content), range);
  }

  async getBytes(ref: string, range: BlobRange = {}): Promise<Uint8Array | undefined> {
    const offset = Math.max(0, range.offset ?? 0);
    const limit = range.limit === undefined ? -1 : Math.max(0, range.limit);
    const row = this.#database.read(() =>
      this.#database.get<{ content: Uint8Array | null }>(
        "SELECT CASE WHEN ? < 0 THEN substr(content, ? + 1) ELSE substr(content, ? + 1, ?) END AS content FROM blobs WHERE ref = ?",
        limit,
        offset,
        offset,
        limit,
        ref,
      ),
    );
    return row && (row.content ?? new Uint8Array());
  }

  async stat(ref: string): Promise<BlobInfo | undefined> {
    const row = this.#database.read(() =>
      this.#database.get<InfoRow>("SELECT ref, media_type, size, is_text FROM blobs WHERE ref = ?", ref),
    );
    return row && infoOf(row);
  }

  async list(sessionId: string): Promise<BlobInfo[]> {
    const rows = this.#database.read(() =>
      this.#database.all<InfoRow>(
        `SELECT b.ref, b.media_type, b.size, b.is_text FROM blob_links l JOIN blobs b ON b.ref = l.ref
          WHERE l.session_id = ? ORDER BY b.ref`,
        sessionId,
      ),
    );
    return rows.map(infoOf);
  }

  async delete(sessionId: string, ref: string): Promise<boolean> {
    return this.#database.write(() => {
      const unlinked = this.#database.run(
        "DELETE FROM blob_links WHERE session_id = ? AND ref = ?",
        sessionId,
        ref,
      );
      collectBlobs(this.#database, [ref]);
      return unlinked > 0;
    });
  }
}
