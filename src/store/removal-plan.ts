/**
 * The backend-independent part of `removeLastMessage`: which row may go, and the session's record after it.
 * Backends read the session and its newest row inside their transaction, call `planRemoval`, and write what it
 * returns (the row deleted with its search words, the record, the governor state dropped).
 */
import { CompactedMessageError } from "../errors/errors.ts";
import { opensTurn } from "../model/turns.ts";
import type { SessionRecord, StoredRow } from "./session-store.ts";

/**
 * The record of `session` once its newest row `last` is removed, or a `CompactedMessageError` when that row is a
 * summary (or a marker) or a summary replaced it. The message count drops by one and the turn count with a user
 * message that opened its turn; `nextSeq` moves on by one, so a writer that loaded the session before the removal
 * expects a stale `nextSeq` and gets `ConcurrentWriteError` rather than appending after a message that is gone
 * (and no seq is ever used twice). Usage and cost stay: the request that produced the message was billed.
 *
 * @example
 * const record = planRemoval(session, last, clock().toISOString());
 */
export function planRemoval(session: SessionRecord, last: StoredRow, now: string): SessionRecord {
  const { message } = last;
  if (message.kind !== undefined || last.summarizedBy !== undefined)
    throw new CompactedMessageError(session.id, message.seq);
  return {
    ...session,
    messageCount: session.messageCount - 1,
    turnCount: opensTurn(message) ? message.turn - 1 : session.turnCount,
    nextSeq: session.nextSeq + 1,
    updatedAt: now,
  };
}
