import { CtxkitError, type CtxkitErrorOptions } from "./ctxkit-error.ts";

/**
 * A file or folder ctxkit cannot use as asked: no permission, a folder where a file is expected (or the
 * reverse), a read-only file system, a full disk. Code `file_access`; `path` names it and the message says what
 * to do. `fromFileSystemError` makes one from a Node `fs` error.
 *
 * @example
 * new FileAccessError("/data/ctxkit.db", "is a folder, not a file; give the path of a database file");
 */
export class FileAccessError extends CtxkitError {
  readonly path: string;
  constructor(path: string, detail: string, options?: CtxkitErrorOptions) {
    super("file_access", `${path}: ${detail}`, options);
    this.path = path;
  }
}

/** What to tell the user for each `errno` code of the file system. */
const advice: Readonly<Record<string, string>> = {
  EACCES: "permission denied; check the permissions of the file and its folder, or choose another path",
  EPERM: "operation not permitted; check the permissions of the file and its folder, or choose another path",
  EISDIR: "is a folder, not a file; give a file path",
  ENOTDIR: "part of the path is a file, not a folder; choose another path",
  EEXIST: "already exists; choose another path or remove it",
  ENOENT: "does not exist here; check the path",
  EROFS: "is on a read-only file system; choose another path",
  ENOSPC: "the disk is full; free space and retry",
  EDQUOT: "the disk quota is exhausted; free space and retry",
};

/**
 * The `FileAccessError` for a Node file system error met while doing `action` on `path` (other errors pass
 * through unchanged).
 *
 * @example
 * try { mkdirSync(folder); } catch (error) { throw fromFileSystemError(error, folder, "cannot create the folder"); }
 * // FileAccessError: /root/x: cannot create the folder: permission denied; check the permissions …
 */
export function fromFileSystemError(error: unknown, path: string, action: string): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || CtxkitError.isInstance(error)) return error;
  const detail = advice[code] ?? `${code} (${(error as Error).message}); check the path and retry`;
  return new FileAccessError(path, `${action}: ${detail}`, { cause: error });
}
