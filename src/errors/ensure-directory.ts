import { mkdirSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { FileAccessError, fromFileSystemError } from "./file-access-error.ts";

/** True when `path` is an existing folder. */
function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Creates `folder` and its missing parents; does nothing when it exists. Unlike `mkdirSync(…, { recursive:
 * true })` it never loops: Node's recursive mkdir spins forever where a folder cannot be created although its
 * parent exists (`/proc/x`). Throws `FileAccessError` naming the folder and what to do.
 *
 * @example
 * ensureDirectory(dirname(databasePath));
 */
export function ensureDirectory(folder: string): void {
  const attempt = (): boolean => {
    try {
      mkdirSync(folder);
      return true;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === "EEXIST") {
        if (isDirectory(folder)) return true;
        throw new FileAccessError(folder, "is a file, not a folder; choose another path", { cause: error });
      }
      if (code === "ENOENT") return false;
      throw fromFileSystemError(error, folder, "cannot create the folder");
    }
  };
  if (attempt()) return;
  const parent = dirname(folder);
  if (parent !== folder) ensureDirectory(parent);
  if (attempt()) return;
  throw new FileAccessError(folder, "cannot create the folder here; choose another path");
}
