import { HttpError } from "../http/http-error.ts";

/**
 * Locks that serialise a session's turns across the servers sharing one database (`PostgresTurnLocks` from
 * `ctxkit/postgres`), as the server's own lease does within one process.
 */
export interface TurnLocks {
  /** Takes the lock of `key` unless another server holds it: its release, or undefined. */
  tryLock(key: string): Promise<(() => Promise<void>) | undefined>;
}

/** How long a turn waits for another server's turn on the same session before it is refused. */
export const TURN_LOCK_WAIT_MS = 30_000;

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/**
 * Waits for the session's turn lock (another server's turn on it ends first, as a turn on this server would),
 * polling with a growing pause; a 409 `concurrent_write` when it is held longer than `waitMs` — before anything
 * is sent upstream. A database that cannot be reached takes no lock: the store's check of the write still
 * refuses a stale one. Resolves with the release.
 *
 * @example
 * const unlock = await waitForTurnLock(locks, storeId, "ses_1");
 */
export async function waitForTurnLock(
  locks: TurnLocks,
  key: string,
  publicId: string,
  waitMs = TURN_LOCK_WAIT_MS,
): Promise<() => void> {
  const deadline = performance.now() + waitMs;
  for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
    let release: (() => Promise<void>) | undefined;
    try {
      release = await locks.tryLock(key);
    } catch {
      return () => undefined;
    }
    if (release !== undefined) {
      const unlock = release;
      return () => void unlock();
    }
    if (performance.now() + pause > deadline) {
      throw new HttpError(
        409,
        "concurrent_write",
        `session ${publicId} is in a turn on another server for more than ${Math.round(waitMs / 1000)} s; ` +
          "retry when it has ended",
      );
    }
    await sleep(pause);
  }
}
