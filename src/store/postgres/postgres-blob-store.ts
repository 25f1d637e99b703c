import { sliceText, type BlobInfo, type BlobRange, type BlobStore } from "../blob-store.ts";
import { bytesBlob, textBlob } from "../media-blobs.ts";
import type { PostgresDatabase } from "./postgres-database.ts";
import { collectBlobs, insertBlobs } from "./postgres-rows.ts";

interface InfoRow {
  readonly ref: string;
  readonly media_type: string;
  readonly size: number;
  readonly is_text: boolean;
}

const infoOf = (row: InfoRow): BlobInfo => ({
  ref: row.ref,
  mediaType: row.media_type,
  size: row.size,
  isText: row.is_text,
});

const asBytes = (buffer: Buffer): Uint8Array =>
  new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);

/**
 * Blobs in the `blobs` table of a ctxkit PostgreSQL schema, linked to sessions by `blob_links`. Byte ranges are
 * read with `substring` on the server, so a page of a large blob does not transfer the whole blob.
 *
 * @example
 * const ref = await store.blobs.putText("s1", output);
 */
export class PostgresBlobStore implements BlobStore {
  readonly #database: PostgresDatabase;

  constructor(database: PostgresDatabase) {
    this.#database = database;
  }

  async putText(sessionId: string, text: string, mediaType = "text/plain"): Promise<string> {
    const blob = textBlob(text, mediaType);
    await this.#database.transaction((queries) => insertBlobs(queries, sessionId, [blob]));
    return blob.ref;
  }

  async putBytes(sessionId: string, bytes: Uint8Array, mediaType: string): Promise<string> {
    const blob = bytesBlob(bytes, mediaType);
    await this.#database.transaction((queries) => insertBlobs(queries, sessionId, [blob]));
    return blob.ref;
  }

  async getText(ref: string, range?: BlobRange): Promise<string | undefined> {
    const row = await this.#database.row<{ content: Buffer }>("SELECT content FROM {blobs} WHERE ref = $1", [
      ref,
    ]);
    return row && sliceText(row.content.toString("utf8"), range);
  }

  async getBytes(ref: string, range: BlobRange = {}): Promise<Uint8Array | undefined> {
    const offset = Math.max(0, range.offset ?? 0);
    const row =
      range.limit === undefined
        ? await this.#database.row<{ content: Buffer }>(
            "SELECT substring(content FROM $2::int + 1) AS content FROM {blobs} WHERE ref = $1",
            [ref, offset],
          )
        : await this.#database.row<{ content: Buffer }>(
            "SELECT substring(content FROM $2::int + 1 FOR $3::int) AS content FROM {blobs} WHERE ref = $1",
            [ref, offset, Math.max(0, range.limit)],
          );
    return row && asBytes(row.content);
  }

  async stat(ref: string): Promise<BlobInfo | undefined> {
    const row = await this.#database.row<InfoRow>(
      "SELECT ref, media_type, size, is_text FROM {blobs} WHERE ref = $1",
      [ref],
    );
    return row && infoOf(row);
  }

  async list(sessionId: string): Promise<BlobInfo[]> {
    const rows = await this.#database.rows<InfoRow>(
      `SELECT b.ref, b.media_type, b.size, b.is_text FROM {blob_links} l JOIN {blobs} b ON b.ref = l.ref
        WHERE l.session_id = $1 ORDER BY b.ref COLLATE "C"`,
      [sessionId],
    );
    return rows.map(infoOf);
  }

  async delete(sessionId: string, ref: string): Promise<boolean> {
    return this.#database.transaction(async (queries) => {
      const unlinked = await queries.run("DELETE FROM {blob_links} WHERE session_id = $1 AND ref = $2", [
        sessionId,
        ref,
      ]);
      await collectBlobs(queries, [ref]);
      return unlinked > 0;
    });
  }
}
