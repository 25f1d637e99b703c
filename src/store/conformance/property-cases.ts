import fc from "fast-check";
import { expect, it } from "vitest";
import type { SessionStore } from "../session-store.ts";
import { fullTurn, user, type ConformanceContext } from "./conformance-fixtures.ts";

type Operation =
  | { readonly kind: "turn"; readonly size: number }
  | { readonly kind: "compact"; readonly start: number; readonly length: number };

interface ModelRow {
  readonly seq: number;
  readonly position: number;
  hidden: boolean;
}

const operation = fc.oneof(
  fc.record({ kind: fc.constant("turn" as const), size: fc.integer({ min: 1, max: 4 }) }),
  fc.record({
    kind: fc.constant("compact" as const),
    start: fc.nat(30),
    length: fc.integer({ min: 1, max: 6 }),
  }),
);

const viewOf = (rows: readonly ModelRow[]) =>
  rows.filter((row) => !row.hidden).sort((a, b) => a.position - b.position);

async function apply(
  store: SessionStore,
  sessionId: string,
  rows: ModelRow[],
  step: Operation,
  turn: number,
): Promise<void> {
  const nextSeq = rows.length;
  if (step.kind === "turn") {
    const messages = [user(`turn ${turn}`), ...fullTurn(turn).slice(1)].slice(0, step.size);
    await store.appendTurn(sessionId, messages, { expectedNextSeq: nextSeq });
    messages.forEach((_, index) =>
      rows.push({ seq: nextSeq + index, position: nextSeq + index, hidden: false }),
    );
    return;
  }
  const view = viewOf(rows);
  if (view.length === 0) return;
  const start = step.start % view.length;
  const replaced = view.slice(start, start + step.length);
  await store.applyCompaction(sessionId, {
    fromSeq: replaced[0]!.seq,
    toSeq: replaced.at(-1)!.seq,
    summary: user("summary"),
    expectedNextSeq: nextSeq,
  });
  for (const row of replaced) row.hidden = true;
  rows.push({ seq: nextSeq, position: replaced[0]!.position, hidden: false });
}

/** Invariants under random turns and compactions, checked against a tiny model. */
export function propertyCases(context: ConformanceContext, runs: number): void {
  it("keeps seqs unique, loses no row and returns the view in order under random writes", async () => {
    // One store for every run (opening one can take a thread's start), each run on a session of its own.
    const store = context.store();
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 12 }), async (operations) => {
        const sessionId = `p${++run}`;
        const rows: ModelRow[] = [];
        await store.appendTurn(sessionId, [user("start")]);
        rows.push({ seq: 0, position: 0, hidden: false });
        let turn = 1;
        for (const step of operations) await apply(store, sessionId, rows, step, ++turn);
        const full = await store.loadMessages(sessionId);
        expect(full.map((message) => message.seq)).toEqual(viewOf(rows).map((row) => row.seq));
        const all = await store.loadMessages(sessionId, { strategy: "all" });
        expect(all.map((message) => message.seq).sort((a, b) => a - b)).toEqual(rows.map((row) => row.seq));
        const session = await store.getSession(sessionId);
        expect(session).toMatchObject({ messageCount: rows.length, nextSeq: rows.length });
      }),
      { numRuns: runs },
    );
  });
}
