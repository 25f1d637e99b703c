/** Sync-state rows and the blob and sync parts of a session dump, on the SQLite schema. */
import type { JsonValue } from "../../model/message.ts";
import type { BlobData, SyncState } from "../session-store.ts";
import type { SqliteDatabase } from "./sqlite-database.ts";

interface SyncRow {
  readonly agent: string;
  readonly cursor: string;
  readonly executor_session_id: string | null;
  readonly updated_at: string;
}

const syncStateOf = (row: SyncRow): SyncState => ({
  agent: row.agent,
  cursor: JSON.parse(row.cursor) as JsonValue,
  ...(row.executor_session_id !== null && { executorSessionId: row.executor_session_id }),
  updatedAt: row.updated_at,
});

const SYNC_SELECT =
  "SELECT agent, cursor, executor_session_id, updated_at FROM sync_states WHERE session_id = ?";

/** One agent's sync state of a session. */
export function readSyncState(
  database: SqliteDatabase,
  sessionId: string,
  agent: string,
): SyncState | undefined {
  const row = database.get<SyncRow>(`${SYNC_SELECT} AND agent = ?`, sessionId, agent);
  return row && syncStateOf(row);
}

/** Inserts or replaces one agent's sync state. */
export function writeSyncState(database: SqliteDatabase, sessionId: string, state: SyncState): void {
  database.run(
    `INSERT INTO sync_states (session_id, agent, cursor, executor_session_id, updated_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT (session_id, agent) DO UPDATE SET cursor = excluded.cursor,
      executor_session_id = excluded.executor_session_id, updated_at = excluded.updated_at`,
    sessionId,
    state.agent,
    JSON.stringify(state.cursor),
    state.executorSessionId ?? null,
    state.updatedAt,
  );
}

interface BlobRow {
  readonly ref: string;
  readonly media_type: string;
  readonly is_text: number;
  readonly content: Uint8Array;
}

/** The blobs (by ref) and sync states (by agent) of a session, for its dump. */
export function readDumpExtras(
  database: SqliteDatabase,
  sessionId: string,
): { blobs: BlobData[]; syncStates: SyncState[] } {
  const blobs = database
    .all<BlobRow>(
      `SELECT b.ref, b.media_type, b.is_text, b.content FROM blob_links l JOIN blobs b ON b.ref = l.ref
        WHERE l.session_id = ? ORDER BY b.ref`,
      sessionId,
    )
    .map((row) => ({
      ref: row.ref,
      mediaType: row.media_type,
      isText: row.is_text === 1,
      bytes: row.content,
    }));
  const syncStates = database.all<SyncRow>(`${SYNC_SELECT} ORDER BY agent`, sessionId).map(syncStateOf);
  return { blobs, syncStates };
}
