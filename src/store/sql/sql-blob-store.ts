import { sql } from "kysely";
import { sliceText, type BlobInfo, type BlobRange, type BlobStore } from "../blob-store.ts";
import { bytesBlob, textBlob } from "../media-blobs.ts";
import { bytesOf, collectBlobs, flagOf, insertBlobs } from "./session-rows.ts";
import type { SqlDatabase } from "./sql-database.ts";

interface InfoRow {
  readonly ref: string;
  readonly media_type: string;
  readonly size: number;
  readonly is_text: number | boolean;
}

const infoOf = (row: InfoRow): BlobInfo => ({
  ref: row.ref,
  mediaType: row.media_type,
  size: row.size,
  isText: flagOf(row.is_text),
});

const decoder = new TextDecoder();

/**
 * Blobs in the `blobs` table of a ctxkit SQL database, linked to sessions by `blob_links`. Byte ranges are
 * read with `substr` in the database, so a page of a large blob does not load the whole blob.
 *
 * @example
 * const ref = await store.blobs.putText("s1", output);
 */
export class SqlBlobStore implements BlobStore {
  readonly #database: SqlDatabase;

  /** @internal The session store creates it. */
  constructor(database: SqlDatabase) {
    this.#database = database;
  }

  async putText(sessionId: string, text: string, mediaType = "text/plain"): Promise<string> {
    const blob = textBlob(text, mediaType);
    await this.#database.write((queries) => insertBlobs(this.#database, queries, sessionId, [blob]));
    return blob.ref;
  }

  async putBytes(sessionId: string, bytes: Uint8Array, mediaType: string): Promise<string> {
    const blob = bytesBlob(bytes, mediaType);
    await this.#database.write((queries) => insertBlobs(this.#database, queries, sessionId, [blob]));
    return blob.ref;
  }

  async getText(ref: string, range?: BlobRange): Promise<string | undefined> {
    const row = await this.#database.queries.first<{ content: Uint8Array }>(
      this.#database.builder.selectFrom("blobs").select("content").where("ref", "=", ref),
    );
    return row && sliceText(decoder.decode(row.content), range);
  }

  async getBytes(ref: string, range: BlobRange = {}): Promise<Uint8Array | undefined> {
    const start = Math.max(0, range.offset ?? 0) + 1;
    const part =
      range.limit === undefined
        ? sql<Uint8Array>`substr(content, ${start})`
        : sql<Uint8Array>`substr(content, ${start}, ${Math.max(0, range.limit)})`;
    const row = await this.#database.queries.first<{ content: Uint8Array | null }>(
      this.#database.builder.selectFrom("blobs").select(part.as("content")).where("ref", "=", ref),
    );
    return row && (row.content === null ? new Uint8Array() : bytesOf(row.content));
  }

  async stat(ref: string): Promise<BlobInfo | undefined> {
    const row = await this.#database.queries.first<InfoRow>(
      this.#database.builder
        .selectFrom("blobs")
        .select(["ref", "media_type", "size", "is_text"])
        .where("ref", "=", ref),
    );
    return row && infoOf(row);
  }

  async list(sessionId: string): Promise<BlobInfo[]> {
    const { builder, dialect } = this.#database;
    const rows = await this.#database.queries.all<InfoRow>(
      builder
        .selectFrom("blob_links as l")
        .innerJoin("blobs as b", "b.ref", "l.ref")
        .select(["b.ref", "b.media_type", "b.size", "b.is_text"])
        .where("l.session_id", "=", sessionId)
        .orderBy(dialect.bytewise("b.ref")),
    );
    return rows.map(infoOf);
  }

  async delete(sessionId: string, ref: string): Promise<boolean> {
    return this.#database.write(async (queries) => {
      const unlinked = await queries.run(
        this.#database.builder
          .deleteFrom("blob_links")
          .where("session_id", "=", sessionId)
          .where("ref", "=", ref),
      );
      await collectBlobs(this.#database, queries, [ref]);
      return unlinked > 0;
    });
  }
}
