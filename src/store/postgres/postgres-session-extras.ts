/** Sync-state rows and the blob and sync parts of a session dump, on the PostgreSQL schema. */
import type { JsonValue } from "../../model/message.ts";
import type { BlobData, SyncState } from "../session-store.ts";
import type { PostgresQueries } from "./postgres-database.ts";

interface SyncRow {
  readonly agent: string;
  readonly cursor: JsonValue;
  readonly executor_session_id: string | null;
  readonly updated_at: string;
}

const syncStateOf = (row: SyncRow): SyncState => ({
  agent: row.agent,
  cursor: row.cursor,
  ...(row.executor_session_id !== null && { executorSessionId: row.executor_session_id }),
  updatedAt: row.updated_at,
});

const SYNC_SELECT =
  "SELECT agent, cursor, executor_session_id, updated_at FROM {sync_states} WHERE session_id = $1";

/** One agent's sync state of a session. */
export async function readSyncState(
  queries: PostgresQueries,
  sessionId: string,
  agent: string,
): Promise<SyncState | undefined> {
  const row = await queries.row<SyncRow>(`${SYNC_SELECT} AND agent = $2`, [sessionId, agent]);
  return row && syncStateOf(row);
}

/** Inserts or replaces one agent's sync state. */
export async function writeSyncState(
  queries: PostgresQueries,
  sessionId: string,
  state: SyncState,
): Promise<void> {
  await queries.run(
    `INSERT INTO {sync_states} (session_id, agent, cursor, executor_session_id, updated_at) VALUES ($1, $2, $3, $4, $5)
      ON CONFLICT (session_id, agent) DO UPDATE SET cursor = excluded.cursor,
      executor_session_id = excluded.executor_session_id, updated_at = excluded.updated_at`,
    [sessionId, state.agent, JSON.stringify(state.cursor), state.executorSessionId ?? null, state.updatedAt],
  );
}

interface BlobRow {
  readonly ref: string;
  readonly media_type: string;
  readonly is_text: boolean;
  readonly content: Buffer;
}

/** The blobs (by ref) and sync states (by agent) of a session, for its dump. */
export async function readDumpExtras(
  queries: PostgresQueries,
  sessionId: string,
): Promise<{ blobs: BlobData[]; syncStates: SyncState[] }> {
  const blobRows = await queries.rows<BlobRow>(
    `SELECT b.ref, b.media_type, b.is_text, b.content FROM {blob_links} l JOIN {blobs} b ON b.ref = l.ref
      WHERE l.session_id = $1 ORDER BY b.ref COLLATE "C"`,
    [sessionId],
  );
  const blobs = blobRows.map((row) => ({
    ref: row.ref,
    mediaType: row.media_type,
    isText: row.is_text,
    bytes: new Uint8Array(row.content.buffer, row.content.byteOffset, row.content.byteLength),
  }));
  const syncStates = (await queries.rows<SyncRow>(`${SYNC_SELECT} ORDER BY agent`, [sessionId])).map(
    syncStateOf,
  );
  return { blobs, syncStates };
}
