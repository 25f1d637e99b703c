// Child process of the concurrency test. Phase "free": appends its own turns to its own session and to one
// shared session, retrying a shared append that lost a race; prints "ack <session> <tag>" after each commit and
// "conflict" for each ConcurrentWriteError. Phase "duel": per round, reads the shared session's next seq,
// prints "read <round>", waits for "go" on stdin, then appends with that seq and prints "ok <round>" or
// "conflict <round>". Any other error is printed as "error <code> <message>" and ends the worker.
import { createInterface } from "node:readline";
import { CtxkitError } from "../../../src/errors/index.ts";
import type { SessionStore } from "../../../src/store/index.ts";
import { openStore, say, taggedTurn, type StoreSpec } from "./worker-store.ts";

const { spec, worker, phase, count } = JSON.parse(process.argv[2]!) as {
  spec: StoreSpec;
  worker: number;
  phase: "free" | "duel";
  count: number;
};
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const store = await openStore(spec);

function codeOf(error: unknown): string {
  return CtxkitError.isInstance(error) ? error.code : "unknown";
}

async function fail(error: unknown): Promise<never> {
  await say(`error ${codeOf(error)} ${(error as Error).message}`);
  process.exit(2);
}

/** Appends a turn, re-reading the session after a lost race or a busy database, until it is stored. */
async function appendUntilStored(target: SessionStore, sessionId: string, tag: string): Promise<void> {
  for (;;) {
    const session = await target.getSession(sessionId);
    try {
      await target.appendTurn(sessionId, taggedTurn(tag, 1 + (tag.length % 2), 50), {
        expectedNextSeq: session?.nextSeq ?? 0,
      });
      return;
    } catch (error) {
      if (codeOf(error) === "concurrent_write") await say("conflict");
      else if (!(CtxkitError.isInstance(error) && (error as { retryable?: boolean }).retryable === true))
        await fail(error);
    }
  }
}

try {
  if (phase === "free") {
    for (let index = 0; index < count; index++) {
      const tag = `w${worker}-${index}`;
      await appendUntilStored(store, `own-${worker}`, tag);
      await say(`ack own-${worker} ${tag}`);
      await appendUntilStored(store, "shared", tag);
      await say(`ack shared ${tag}`);
    }
  } else {
    for (let round = 0; round < count; round++) {
      const expectedNextSeq = (await store.getSession("duel"))?.nextSeq ?? 0;
      await say(`read ${round}`);
      await lines.next();
      try {
        await store.appendTurn("duel", taggedTurn(`w${worker}r${round}`, 1, 20), { expectedNextSeq });
        await say(`ok ${round}`);
      } catch (error) {
        if (codeOf(error) !== "concurrent_write") await fail(error);
        await say(`conflict ${round}`);
      }
    }
  }
  await store.close();
  await say("done");
} catch (error) {
  await fail(error);
}
