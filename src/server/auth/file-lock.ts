import { randomBytes } from "node:crypto";
import { link, open, readFile, rename, rm, stat } from "node:fs/promises";
import { hostname } from "node:os";
import { StoreError } from "../../errors/errors.ts";

/** How long and how patiently `withFileLock` waits. */
export interface FileLockOptions {
  /** Give up after this many ms of waiting (default 10 s). */
  readonly timeoutMs?: number;
  /** A lock older than this is taken over even if its process seems alive (default 30 s). */
  readonly staleMs?: number;
  /**
   * A lock whose process is gone is taken over once it is this old (default 2 s). A holder removes its lock before
   * it exits, so a young lock of a gone process is one that was released and replaced while we looked: taking it
   * over then would break the new holder's lock.
   */
  readonly goneHolderGraceMs?: number;
}

interface LockOwner {
  readonly pid: number;
  readonly host: string;
  readonly token: string;
}

function parseOwner(text: string): LockOwner | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockOwner>;
    if (typeof value.pid === "number" && typeof value.host === "string" && typeof value.token === "string") {
      return { pid: value.pid, host: value.host, token: value.token };
    }
  } catch {
    // half-written by a holder that is still starting, or by one that died: judged by age below
  }
  return undefined;
}

/** True when no process with this id runs on this machine (a process of another user still counts as running). */
export function processIsGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

const errorCode = (error: unknown) => (error as NodeJS.ErrnoException).code;

async function tryCreate(lockPath: string, owner: LockOwner): Promise<boolean> {
  let handle;
  try {
    handle = await open(lockPath, "wx", 0o600);
  } catch (error) {
    if (errorCode(error) === "EEXIST") return false;
    throw error;
  }
  try {
    await handle.writeFile(JSON.stringify(owner));
  } catch (error) {
    await handle.close();
    await rm(lockPath, { force: true });
    throw error;
  }
  await handle.close();
  return true;
}

/**
 * Takes over a lock whose holder is gone (its pid is dead on this host) or that is older than `staleMs`. The
 * lock is first renamed to a private name, so two processes breaking the same stale lock cannot both win; if
 * what was renamed turns out to be a fresh lock (it changed after we judged it), it is put back.
 */
async function breakIfStale(lockPath: string, staleMs: number, graceMs: number): Promise<void> {
  let text: string;
  let modified: number;
  try {
    [text, modified] = await Promise.all([readFile(lockPath, "utf8"), stat(lockPath).then((s) => s.mtimeMs)]);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return;
    throw error;
  }
  const owner = parseOwner(text);
  const age = Date.now() - modified;
  const holderGone =
    owner !== undefined && owner.host === hostname() && age > graceMs && processIsGone(owner.pid);
  if (!holderGone && age <= staleMs) return;
  const aside = `${lockPath}.${randomBytes(6).toString("hex")}.stale`;
  try {
    await rename(lockPath, aside);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return;
    throw error;
  }
  const taken = await readFile(aside, "utf8");
  if (taken !== text) {
    await link(aside, lockPath).catch(() => undefined); // a live holder's lock: restore it unless replaced
  }
  await rm(aside, { force: true });
}

/**
 * Runs `work` while holding an exclusive lock file (`<path>.lock`, created with O_EXCL) that serialises
 * read-modify-write cycles across processes. Waiting retries with growing, jittered delays; a lock left by a
 * process that died is taken over. Throws a retryable StoreError when the lock cannot be had within `timeoutMs`.
 *
 * @example
 * await withFileLock("/home/ada/.ctxkit/server-keys.json", async () => save(modify(await load())));
 */
export async function withFileLock<T>(
  path: string,
  work: () => Promise<T>,
  options: FileLockOptions = {},
): Promise<T> {
  const lockPath = `${path}.lock`;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const staleMs = options.staleMs ?? 30_000;
  const graceMs = options.goneHolderGraceMs ?? 2_000;
  const owner: LockOwner = { pid: process.pid, host: hostname(), token: randomBytes(12).toString("hex") };
  const started = Date.now();
  for (let attempt = 0; !(await tryCreate(lockPath, owner)); attempt++) {
    await breakIfStale(lockPath, staleMs, graceMs);
    if (Date.now() - started > timeoutMs) {
      throw new StoreError(
        `${path} is locked by another process (${lockPath}); retry, or delete the lock file if no ctxkit process is running`,
        true,
      );
    }
    const delay = Math.min(100, 2 ** Math.min(attempt, 7)) * (0.5 + Math.random());
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
  try {
    return await work();
  } finally {
    const current = await readFile(lockPath, "utf8").catch(() => undefined);
    if (current !== undefined && parseOwner(current)?.token === owner.token)
      await rm(lockPath, { force: true });
  }
}
