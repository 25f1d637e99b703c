import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { openSqliteSessionStore } from "../../src/store/sqlite/index.ts";
import {
  crashRounds,
  expectCompleteRestores,
  expectCompleteTurns,
  expectSearchableTurns,
} from "./crash-harness.ts";

const folder = mkdtempSync(join(tmpdir(), "ctxkit-crash-"));
/** Turns a group-commit worker has acknowledged before its kill may come. */
const ACKS_BEFORE_KILL = 2;
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** Message rows of the file still waiting for their search words (past the mark). */
function backlogOf(path: string): number {
  // Right after a kill the file may still be held a moment (the WAL index recovered): wait instead of failing.
  const raw = new DatabaseSync(path, { readOnly: true, timeout: 10_000 });
  try {
    const row = raw
      .prepare(
        "SELECT (SELECT count(*) FROM messages WHERE row_id > (SELECT indexed_to FROM message_words_state)) AS waiting",
      )
      .get() as { waiting: number };
    return row.waiting;
  } finally {
    raw.close();
  }
}

describe("SQLite store under SIGKILL", () => {
  it("keeps every acknowledged turn and no partial one across 50 kills at random moments", async () => {
    const path = join(folder, "crash.db");
    const spec = { backend: "sqlite" as const, path };
    const rounds = Array.from({ length: 50 }, (_, worker) => ({
      spec,
      sessionId: "crash",
      mode: worker % 5 === 4 ? ("restore" as const) : ("append" as const),
      worker,
    }));
    // How often a kill left rows waiting for their words (killed between a commit and its drain).
    let leftWaiting = 0;
    const { acknowledged, kills } = await crashRounds(
      rounds,
      (round) => (round.mode === "append" ? 200 : 300),
      undefined,
      async () => {
        if (backlogOf(path) > 0) leftWaiting++;
      },
    );
    const appended = acknowledged.filter((tag) => !tag.startsWith("restored-"));
    const restored = acknowledged.filter((tag) => tag.startsWith("restored-"));
    expect(kills).toBe(50);
    const raw = new DatabaseSync(path);
    expect(raw.prepare("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
    raw.close();
    expect(leftWaiting).toBeGreaterThan(0);
    const store = await openSqliteSessionStore({ path, retentionDays: 0 });
    await expectSearchableTurns(store, async () => backlogOf(path), [
      { sessionId: "crash", acknowledged: appended },
    ]);
    const turns = await expectCompleteTurns(store, "crash", appended);
    await expectCompleteRestores(store, restored, 122);
    expect(turns).toBeGreaterThan(0);
    await store.close();
  }, 180_000);
});

describe("SQLite store under SIGKILL during group commits", () => {
  it("keeps every acknowledged turn and no partial one when six writers share the writer thread", async () => {
    const path = join(folder, "group-crash.db");
    const spec = { backend: "sqlite" as const, path, writer: "worker" as const };
    const rounds = Array.from({ length: 30 }, (_, worker) => ({
      spec,
      sessionId: "lane",
      mode: "group" as const,
      worker,
    }));
    let leftWaiting = 0;
    // Each worker is killed at a random moment once its writers have had two turns acknowledged, so the
    // rounds overlap several writers' commits however slow the machine is at the time.
    const { acknowledged, kills, lines } = await crashRounds(
      rounds,
      () => 0,
      async (_round, child) => {
        const deadline = Date.now() + 20_000;
        while (child.lines.filter((line) => line.startsWith("ack ")).length < ACKS_BEFORE_KILL) {
          if (Date.now() > deadline) break;
          await sleep(5);
        }
        await sleep(Math.random() * 250);
      },
      async () => {
        if (backlogOf(path) > 0) leftWaiting++;
      },
    );
    expect(kills).toBe(30);
    const raw = new DatabaseSync(path);
    expect(raw.prepare("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
    raw.close();
    const store = await openSqliteSessionStore({ path, retentionDays: 0 });
    let turns = 0;
    const lanes = [0, 1, 2, 3, 4].map((lane) => {
      const sessionId = `lane-${lane}`;
      const acked = acknowledged
        .filter((line) => line.startsWith(`${sessionId} `))
        .map((line) => line.slice(sessionId.length + 1));
      return { sessionId, acknowledged: acked };
    });
    await expectSearchableTurns(store, async () => backlogOf(path), lanes);
    for (const { sessionId, acknowledged: acked } of lanes) {
      turns += await expectCompleteTurns(store, sessionId, acked);
    }
    // Kills came between the writer thread's commits and its drain.
    expect(leftWaiting).toBeGreaterThan(0);
    // Several writers ran at once: far more turns than rounds were acknowledged, and the writer threads
    // committed them several to a transaction (each worker's last "stats <writes> <groups>" line).
    expect(acknowledged.length).toBeGreaterThanOrEqual(ACKS_BEFORE_KILL * rounds.length);
    const grouped = lines
      .filter((line) => line.startsWith("stats "))
      .map((line) => line.split(" ").map(Number))
      .filter(([, writes, groups]) => writes! > groups!);
    expect(grouped.length).toBeGreaterThan(0);
    expect(turns).toBeGreaterThanOrEqual(acknowledged.length);
    await store.close();
  }, 180_000);
});
