/** `removeLastMessage` on a ctxkit SQL database, inside the caller's write transaction. */
import type { SessionRecord, StoredRow } from "../session-store.ts";
import { planRemoval } from "../removal-plan.ts";
import { writeGovernorState } from "./session-extras.ts";
import {
  messageSelect,
  readSessionForWrite,
  storedRowFromRow,
  updateSessionTotals,
  type MessageRow,
} from "./session-rows.ts";
import type { SqlDatabase, SqlQueries } from "./sql-database.ts";

/**
 * Deletes session `sessionId`'s newest row (see `planRemoval` for what is refused and how the record changes),
 * with its search words, writes the session's new record and drops its governor state. Resolves with the removed
 * row and the record, or undefined when the session does not exist or holds no row.
 */
export async function removeLastRow(
  database: SqlDatabase,
  queries: SqlQueries,
  sessionId: string,
  now: string,
): Promise<{ row: StoredRow; session: SessionRecord } | undefined> {
  const found = await readSessionForWrite(database, queries, sessionId);
  if (found === undefined) return undefined;
  const newest = await queries.first<MessageRow>(
    messageSelect(database).where("m.session_id", "=", sessionId).orderBy("m.seq", "desc").limit(1),
  );
  if (newest === undefined) return undefined;
  const row = storedRowFromRow(newest, database.location);
  const session = planRemoval(found.session, row, now);
  const { seq } = row.message;
  await database.dialect.deleteRowWords(database, queries, sessionId, seq);
  await queries.run(
    database.builder.deleteFrom("messages").where("session_id", "=", sessionId).where("seq", "=", seq),
  );
  await updateSessionTotals(database, queries, session);
  await writeGovernorState(database, queries, sessionId, session.nextSeq, undefined);
  return { row, session };
}
