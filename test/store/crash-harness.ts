// Runs crash-worker children against a store and kills them at random moments; then checks what survived.
import { spawn, type ChildProcess } from "node:child_process";
import { expect } from "vitest";
import type { SessionStore } from "../../src/store/index.ts";
import { bundled } from "../support/bundled.ts";
import type { StoreSpec } from "./workers/worker-store.ts";

/** A child with its complete output lines. */
export interface Child {
  readonly process: ChildProcess;
  readonly lines: string[];
  readonly exited: Promise<number | null>;
  /**
   * Resolves with the first value other than undefined that `check` returns, called on the lines so far and
   * again on each new output; rejects when `check` throws or the child exits first.
   */
  /** What the child wrote to stderr so far. */
  stderr(): string;
  until<T>(check: (lines: readonly string[]) => T | undefined): Promise<T>;
  ready(): Promise<void>;
}

/** Starts a worker script (a `.ts` file run by Node directly) with one JSON argument. */
export function startWorker(script: string, argument: unknown): Child {
  // Inherits NODE_COMPILE_CACHE (test/support/compile-cache.ts): each of the dozens of children starts faster.
  const child = spawn(process.execPath, [script, JSON.stringify(argument)], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let pending = "";
  let stderr = "";
  const waiters: (() => void)[] = [];
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    pending += chunk;
    const complete = pending.split("\n");
    pending = complete.pop()!;
    lines.push(...complete);
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  // "close" (not "exit"): every line the child wrote before it died has been read by then.
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  const until = <T>(check: (lines: readonly string[]) => T | undefined) =>
    new Promise<T>((resolve, reject) => {
      let settled = false;
      const attempt = () => {
        if (settled) return;
        let value: T | undefined;
        try {
          value = check(lines);
        } catch (error) {
          settled = true;
          return reject(error instanceof Error ? error : new Error(String(error)));
        }
        if (value !== undefined) {
          settled = true;
          return resolve(value);
        }
        waiters.push(attempt);
      };
      void exited.then((code) => {
        attempt();
        if (settled) return;
        settled = true;
        reject(new Error(`worker exited (${code}): ${lines.slice(-5).join(" | ")} ${stderr.slice(-1500)}`));
      });
      attempt();
    });
  return {
    process: child,
    lines,
    exited,
    until,
    stderr: () => stderr,
    ready: () => until((seen) => (seen.includes("ready") ? true : undefined)).then(() => undefined),
  };
}

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** Arguments of one crash worker. */
export interface CrashWorkerArgument {
  readonly spec: StoreSpec;
  readonly sessionId: string;
  readonly mode: "append" | "restore" | "group";
  readonly worker: number;
}

/**
 * Runs crash rounds: each starts a worker (the next one is started while the current one runs, so start-up
 * time overlaps), lets it write for a random moment, applies `cut` (e.g. killing its connections) and kills it
 * with SIGKILL. Returns the acknowledged tags of every round, how many workers the SIGKILL ended (a worker
 * that had already died on its own does not count) and every line the workers wrote.
 */
export async function crashRounds(
  rounds: readonly CrashWorkerArgument[],
  maxDelayMs: (argument: CrashWorkerArgument) => number,
  cut: (argument: CrashWorkerArgument, child: Child) => Promise<void> = async () => {},
  afterKill: (argument: CrashWorkerArgument) => Promise<void> = async () => {},
): Promise<{ acknowledged: string[]; kills: number; lines: string[] }> {
  const acknowledged: string[] = [];
  const lines: string[] = [];
  let kills = 0;
  let next: Child | undefined = rounds[0] && startWorker(bundled("crash-worker"), rounds[0]);
  for (let index = 0; index < rounds.length; index++) {
    const child = next!;
    await child.ready();
    next = rounds[index + 1] && startWorker(bundled("crash-worker"), rounds[index + 1]);
    child.process.stdin!.write("go\n");
    await sleep(Math.random() * maxDelayMs(rounds[index]!));
    await cut(rounds[index]!, child);
    const alive = child.process.exitCode === null && child.process.signalCode === null;
    child.process.kill("SIGKILL");
    await child.exited;
    if (alive && child.process.signalCode === "SIGKILL") kills++;
    else {
      const { exitCode, signalCode } = child.process;
      expect.fail(
        `worker ${index} ended before the kill (${exitCode ?? signalCode}): ${child.lines.slice(-3).join(" | ")} ${child.stderr().slice(-1500)}`,
      );
    }
    // A cut connection is a store_error; a conflict with a killed predecessor's late COMMIT (PostgreSQL finishes
    // a transaction whose client is gone) is a concurrent_write. Anything else is a bug.
    const unexpected = child.lines.filter(
      (line) => line.startsWith("fail") && line !== "fail store_error" && line !== "fail concurrent_write",
    );
    expect(unexpected).toEqual([]);
    await afterKill(rounds[index]!);
    acknowledged.push(...child.lines.filter((line) => line.startsWith("ack ")).map((line) => line.slice(4)));
    lines.push(...child.lines);
  }
  return { acknowledged, kills, lines };
}

/**
 * The tags of a session's turns in order, after checking that each turn is whole: all its `parts` messages,
 * contiguous, nothing else in between; seqs 0…n−1 and the counters matching.
 */
export async function wholeTurnTags(store: SessionStore, sessionId: string): Promise<string[]> {
  const session = await store.getSession(sessionId);
  const rows = await store.loadMessages(sessionId, { strategy: "all" });
  expect(session?.nextSeq).toBe(rows.length);
  expect(session?.messageCount).toBe(rows.length);
  expect(rows.map((message) => message.seq)).toEqual(rows.map((_, index) => index));
  const tags: string[] = [];
  for (let index = 0; index < rows.length;) {
    const { tag, parts } = rows[index]!.metadata as { tag: string; parts: number };
    const turn = rows.slice(index, index + parts);
    expect(turn.map((message) => (message.metadata as { tag: string }).tag)).toEqual(Array(parts).fill(tag));
    tags.push(tag);
    index += parts;
  }
  return tags;
}

/** Checks a crash-test session: turns t1…tn, each whole, and every acknowledged one among them. */
export async function expectCompleteTurns(
  store: SessionStore,
  sessionId: string,
  acknowledged: readonly string[],
): Promise<number> {
  const tags = await wholeTurnTags(store, sessionId);
  expect(tags).toEqual(tags.map((_, index) => `t${index + 1}`));
  expect(new Set(tags)).toEqual(new Set([...tags, ...acknowledged]));
  return tags.length;
}

/**
 * Checks search after a crash: right after the reopened store's open, while its drain of what the killed
 * processes left queued may still be under way, a search for each acknowledged turn's tag finds the session at that turn's first message (each tag is a word of its own
 * turn only; queued rows are matched by the search itself); then the queue of words to index (`backlog` counts
 * it) empties with no further write, and the searches find the same.
 */
export async function expectSearchableTurns(
  store: SessionStore,
  backlog: () => Promise<number>,
  sessions: readonly { readonly sessionId: string; readonly acknowledged: readonly string[] }[],
): Promise<void> {
  const firstSeqs = new Map<string, Map<string, number>>();
  for (const { sessionId } of sessions) {
    const seqs = new Map<string, number>();
    for (const message of await store.loadMessages(sessionId, { strategy: "all" })) {
      const { tag } = message.metadata as { tag: string };
      if (!seqs.has(tag)) seqs.set(tag, message.seq);
    }
    firstSeqs.set(sessionId, seqs);
  }
  const checkAll = async () => {
    for (const { sessionId, acknowledged } of sessions) {
      for (const tag of acknowledged) {
        const hits = await store.searchSessions(tag, { limit: 1000 });
        const hit = hits.find((entry) => entry.session.id === sessionId);
        expect(hit?.seq, `${sessionId} ${tag}`).toBe(firstSeqs.get(sessionId)!.get(tag));
      }
    }
  };
  await checkAll();
  // The drain indexes the queue within about a second of the open (250 ms here on a quiet machine); the bound
  // is loose so that a loaded machine does not fail it.
  await expect.poll(backlog, { timeout: 15_000, interval: 20 }).toBe(0);
  await checkAll();
}

/** Checks restored sessions: every acknowledged one is there, and every one there is whole. */
export async function expectCompleteRestores(
  store: SessionStore,
  acknowledged: readonly string[],
  parts: number,
): Promise<void> {
  const present = (await store.listSessions({ limit: 1000 })).sessions.filter((session) =>
    session.id.startsWith("restored-"),
  );
  for (const session of present) {
    expect(session.messageCount).toBe(parts);
    expect(await store.loadMessages(session.id, { strategy: "all" })).toHaveLength(parts);
  }
  expect(new Set(present.map((session) => session.id))).toEqual(
    new Set([...present.map((session) => session.id), ...acknowledged]),
  );
}
