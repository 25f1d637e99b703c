import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { StoreError } from "../../errors/errors.ts";
import { withFileLock } from "./file-lock.ts";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function target(): string {
  const folder = mkdtempSync(join(tmpdir(), "ctxkit-lock-"));
  folders.push(folder);
  return join(folder, "keys.json");
}

/** The pid of a process that has exited (so it is surely not holding anything). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
    encoding: "utf8",
  });
  return Number(child.stdout);
}

const lockText = (pid: number) => JSON.stringify({ pid, host: hostname(), token: "someone-else" });

describe("withFileLock", () => {
  it("runs the work of concurrent callers one at a time and removes its lock", async () => {
    const path = target();
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 8 }, () =>
        withFileLock(path, async () => {
          most = Math.max(most, ++inside);
          await new Promise((resolve) => setTimeout(resolve, 5));
          inside--;
        }),
      ),
    );
    expect(most).toBe(1);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it("takes over a lock whose process is gone, and one older than staleMs", async () => {
    const path = target();
    writeFileSync(`${path}.lock`, lockText(deadPid()));
    const seconds = new Date(Date.now() - 5_000); // its holder died a while ago
    utimesSync(`${path}.lock`, seconds, seconds);
    expect(await withFileLock(path, async () => "ran", { timeoutMs: 2_000 })).toBe("ran");

    writeFileSync(`${path}.lock`, lockText(process.pid)); // alive, but abandoned long ago
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${path}.lock`, old, old);
    expect(await withFileLock(path, async () => "ran again", { timeoutMs: 2_000 })).toBe("ran again");
    expect(readdirSync(join(path, ".."))).toEqual([]);
  });

  it("leaves a just-written lock of a gone process alone for the grace period (released and replaced while looked at)", async () => {
    const path = target();
    writeFileSync(`${path}.lock`, lockText(deadPid()));
    const early = await withFileLock(path, async () => "early", {
      timeoutMs: 200,
      goneHolderGraceMs: 5_000,
    }).catch((caught: unknown) => caught);
    expect(early).toBeInstanceOf(StoreError);
    expect(existsSync(`${path}.lock`)).toBe(true);
    expect(await withFileLock(path, async () => "later", { timeoutMs: 2_000, goneHolderGraceMs: 100 })).toBe(
      "later",
    );
  });

  it("waits for a live holder and gives up with a retryable error naming the lock file", async () => {
    const path = target();
    writeFileSync(`${path}.lock`, lockText(process.pid));
    let ran = false;
    const error = await withFileLock(path, async () => (ran = true), { timeoutMs: 200 }).catch(
      (caught: unknown) => caught,
    );
    expect(ran).toBe(false);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).retryable).toBe(true);
    expect((error as Error).message).toContain(`${path}.lock`);
    expect(existsSync(`${path}.lock`)).toBe(true); // a live holder's lock is left alone
  });
});
