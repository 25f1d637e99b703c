/** How `node:sqlite` failures become ctxkit errors. */
import { CorruptStoreError, CtxkitError, FileAccessError, StoreError } from "../../errors/index.ts";

/** SQLite primary result codes ctxkit reacts to (https://sqlite.org/rescode.html). */
const SQLITE = {
  busy: 5,
  locked: 6,
  readOnly: 8,
  ioError: 10,
  corrupt: 11,
  full: 13,
  cantOpen: 14,
  notADatabase: 26,
};

/** The extended result code of a `node:sqlite` error, or undefined for other errors. */
export function sqliteErrorCode(error: unknown): number | undefined {
  const code = (error as { errcode?: unknown } | null)?.errcode;
  return typeof code === "number" ? code : undefined;
}

/** True for a UNIQUE or PRIMARY KEY constraint failure. */
export function isUniqueViolation(error: unknown): boolean {
  const code = sqliteErrorCode(error);
  return code === 2067 || code === 1555;
}

/**
 * The ctxkit error for a SQLite failure: a damaged file or a non-database becomes `CorruptStoreError`; a
 * read-only or unopenable file `FileAccessError`; busy, full and I/O failures become `StoreError`s that say
 * what to do. ctxkit errors pass through.
 *
 * @example
 * try { … } catch (error) { throw toStoreError(error, "/home/ada/.ctxkit/ctxkit.db"); }
 */
export function toStoreError(error: unknown, location: string): CtxkitError {
  if (CtxkitError.isInstance(error)) return error;
  const code = sqliteErrorCode(error);
  const detail = error instanceof Error ? error.message : String(error);
  const cause = { cause: error };
  switch (code === undefined ? undefined : code & 0xff) {
    case SQLITE.corrupt:
      return new CorruptStoreError(location, `the database is damaged (${detail})`, cause);
    case SQLITE.notADatabase:
      return new CorruptStoreError(location, `the file is not a database (${detail})`, cause);
    case SQLITE.busy:
    case SQLITE.locked:
      return new StoreError(
        `${location}: the database stayed locked by another writer (${detail}); retry, or raise busyTimeoutMs`,
        true,
        cause,
      );
    case SQLITE.full:
      return new StoreError(
        `${location}: the disk or the database size limit is full (${detail}); free space and retry`,
        true,
        cause,
      );
    case SQLITE.readOnly:
      return new FileAccessError(
        location,
        `the database cannot be written (${detail}); check the permissions of the file and its folder`,
        cause,
      );
    case SQLITE.cantOpen:
      return new FileAccessError(
        location,
        `cannot open the database (${detail}); check that the path is a file in a folder you may write`,
        cause,
      );
    case SQLITE.ioError:
      return new StoreError(`${location}: disk I/O error (${detail}); check the disk and retry`, true, cause);
    default:
      return new StoreError(`${location}: ${detail}`, false, cause);
  }
}
