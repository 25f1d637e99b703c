/**
 * vitest `globalSetup`: when the machine has a RAM-backed folder with room (`/dev/shm` on Linux) and `TMPDIR` is
 * not set, the tests' temporary files go there — their SQLite databases, the PostgreSQL cluster, the CLI's homes.
 * Every durable commit the stores make is an fsync, which on a busy disk stalls the test that waits for it; in
 * RAM it returns at once. Nothing the tests check depends on the disk: a SIGKILLed process leaves its writes in
 * the page cache on either. Set `TMPDIR` to keep them on disk.
 */
import { accessSync, constants, statfsSync } from "node:fs";

/** The RAM-backed folder used when it has at least this much free space. */
const FOLDER = "/dev/shm";
const MIN_FREE_BYTES = 4 * 1024 ** 3;

/** True when `folder` is writable and has `MIN_FREE_BYTES` free. */
function roomIn(folder: string): boolean {
  try {
    accessSync(folder, constants.W_OK);
    const { bavail, bsize } = statfsSync(folder);
    return bavail * bsize >= MIN_FREE_BYTES;
  } catch {
    return false;
  }
}

export default function setup(): void {
  if (process.env["TMPDIR"] === undefined && roomIn(FOLDER)) process.env["TMPDIR"] = FOLDER;
}
