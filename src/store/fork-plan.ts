import { NotFoundError, ValidationError } from "../errors/errors.ts";
import type { PriceTable } from "../pricing/model-prices.ts";
import type { SessionRecord, StoredRow } from "./session-store.ts";
import { usageDelta } from "./usage-totals.ts";

/**
 * The rows a fork at `atSeq` copies: every visible row standing at or before it, and — so that export and
 * audit still see them — the rows those copied summaries replaced (recursively). Rows keep their seq, id,
 * position and summarised mark; their `sessionId` becomes the fork's.
 *
 * @example
 * const copied = forkRows(parentRows, 12, "s1-fork");
 */
export function forkRows(rows: readonly StoredRow[], atSeq: number, forkId: string): StoredRow[] {
  const at = rows.find((row) => row.message.seq === atSeq);
  if (!at)
    throw new NotFoundError(
      "message",
      `${rows[0]?.message.sessionId ?? "?"}#${atSeq}`,
      "fork at a stored message",
    );
  if (at.summarizedBy !== undefined) {
    throw new ValidationError(
      `message ${atSeq} was replaced by summary ${at.summarizedBy}; fork at a visible message (the summary or a later one)`,
    );
  }
  const kept = new Set<number>();
  for (const row of rows)
    if (row.summarizedBy === undefined && row.position <= at.position) kept.add(row.message.seq);
  // A summary is newer than what it replaced, so newest-first usually settles in one pass.
  const newestFirst = [...rows].sort((a, b) => b.message.seq - a.message.seq);
  let grew = true;
  while (grew) {
    grew = false;
    for (const row of newestFirst) {
      if (row.summarizedBy !== undefined && !kept.has(row.message.seq) && kept.has(row.summarizedBy)) {
        kept.add(row.message.seq);
        grew = true;
      }
    }
  }
  return rows
    .filter((row) => kept.has(row.message.seq))
    .map((row) => ({ ...row, message: { ...row.message, sessionId: forkId } }));
}

/**
 * The record of a fork: the parent's owner, agent, metadata and origin, counters and usage recomputed from
 * the copied rows (usage not attached to a message stays with the parent).
 *
 * @example
 * const record = forkRecord(parent, copied, { id: "s1-fork", atSeq: 12, now, prices });
 */
export function forkRecord(
  parent: SessionRecord,
  rows: readonly StoredRow[],
  fork: { id: string; atSeq: number; title: string | undefined; now: string; prices: PriceTable },
): SessionRecord {
  const messages = rows.map((row) => row.message);
  const delta = usageDelta(messages, [], fork.prices);
  const title = fork.title ?? parent.title;
  return {
    id: fork.id,
    ...(parent.owner !== undefined && { owner: parent.owner }),
    ...(parent.agent !== undefined && { agent: parent.agent }),
    ...(title !== undefined && { title }),
    createdAt: fork.now,
    updatedAt: fork.now,
    parentId: parent.id,
    forkSeq: fork.atSeq,
    messageCount: rows.length,
    turnCount: messages.reduce((turn, message) => Math.max(turn, message.turn), 0),
    nextSeq: messages.reduce((seq, message) => Math.max(seq, message.seq + 1), 0),
    usage: delta.usage,
    cost: delta.cost,
    metadata: parent.metadata,
    executorSessionIds: {},
    ...(parent.origin !== undefined && { origin: parent.origin }),
  };
}
