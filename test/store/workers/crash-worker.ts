// Child process of the crash test: appends tagged turns to one session (or restores whole sessions) for ever,
// printing "ack <tag>" after each committed write, until the test kills it. A failed write (the connection cut)
// or a conflict with a late commit is reported as "fail <code>" and the worker goes on from what the store says
// was committed.
import { flushCompileCache } from "node:module";
import { CtxkitError } from "../../../src/errors/index.ts";
import { sequentialIds } from "../../../src/model/ids.ts";
import { openStore, say, taggedTurn, type StoreSpec } from "./worker-store.ts";

const { spec, sessionId, mode, worker } = JSON.parse(process.argv[2]!) as {
  spec: StoreSpec;
  sessionId: string;
  mode: "append" | "restore" | "group";
  worker: number;
};
const store = await openStore(spec);
// Killed workers never exit normally, so the compile cache the test enables is written now.
flushCompileCache();
await say("ready");
// Started ahead of time by the test; writes begin when it says "go".
await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
const ids = sequentialIds();
if (mode === "group") await appendInLanes();
for (let round = 0; ; round++) {
  try {
    if (mode === "append") {
      const session = await store.getSession(sessionId);
      const tag = `t${(session?.turnCount ?? 0) + 1}`;
      await store.appendTurn(sessionId, taggedTurn(tag, 1 + (round % 4), 1500), {
        expectedNextSeq: session?.nextSeq ?? 0,
      });
      await say(`ack ${tag}`);
    } else {
      const id = `restored-${worker}-${round}`;
      const messages = taggedTurn(id, 60, 200).map((input, seq) => ({
        ...input,
        id: ids("m"),
        sessionId: id,
        seq,
        turn: 1,
        createdAt: "2025-01-01T00:00:00.000Z",
      }));
      const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
      await store.restoreSession({
        session: {
          id,
          createdAt: "2025-01-01T00:00:00.000Z",
          updatedAt: "2025-01-01T00:00:00.000Z",
          messageCount: messages.length,
          turnCount: 1,
          nextSeq: messages.length,
          usage,
          cost: 0,
          metadata: {},
          executorSessionIds: {},
        },
        rows: messages.map((message) => ({ message, position: message.seq })),
        blobs: [],
        syncStates: [],
      });
      await say(`ack ${id}`);
    }
  } catch (error) {
    await say(`fail ${CtxkitError.isInstance(error) ? error.code : String(error)}`);
    // A conflict is legitimate too: a killed predecessor's COMMIT may land after this worker read the session
    // (the server finishes a transaction whose client is gone). The store refused the stale append: go on.
    const expected = ["store_error", "concurrent_write"];
    if (!CtxkitError.isInstance(error) || !expected.includes(error.code)) process.exit(3);
  }
}

/**
 * Group mode: six writers append at once through the one store, so the writer thread commits several turns per
 * transaction. Lanes 0–3 own a session each (`<sessionId>-<lane>`); lanes 4 and 5 share `<sessionId>-4`, so
 * some of their appends conflict inside a group. Prints "ack <session> <tag>"; never returns.
 */
async function appendInLanes(): Promise<never> {
  const lane = async (index: number): Promise<never> => {
    const session = `${sessionId}-${Math.min(index, 4)}`;
    for (let round = index; ; round++) {
      try {
        const record = await store.getSession(session);
        const tag = `t${(record?.turnCount ?? 0) + 1}`;
        await store.appendTurn(session, taggedTurn(tag, 1 + (round % 3), 400), {
          expectedNextSeq: record?.nextSeq ?? 0,
        });
        await say(`ack ${session} ${tag}`);
        const stats = (store as { writerStats?: { writes: number; groups: number } }).writerStats;
        if (stats) await say(`stats ${stats.writes} ${stats.groups}`);
      } catch (error) {
        await say(`fail ${CtxkitError.isInstance(error) ? error.code : String(error)}`);
        if (!CtxkitError.isInstance(error) || error.code !== "concurrent_write") process.exit(3);
      }
    }
  };
  return Promise.any(Array.from({ length: 6 }, (_, index) => lane(index)));
}
