/** Sync states, governor states and the blob and sync parts of a session dump, in a ctxkit SQL database. */
import type { JsonValue } from "../../model/message.ts";
import type { BlobData, SyncState } from "../session-store.ts";
import { preparedQuery } from "./prepared-query.ts";
import { bytesOf, flagOf, parseStored } from "./session-rows.ts";
import type { SqlDatabase, SqlQueries, SqlTarget } from "./sql-database.ts";

interface SyncRow {
  readonly agent: string;
  readonly cursor: string;
  readonly executor_session_id: string | null;
  readonly updated_at: string;
}

const syncStateOf = (row: SyncRow, location: string): SyncState => ({
  agent: row.agent,
  cursor: parseStored(row.cursor, location, `the sync cursor of agent "${row.agent}"`) as JsonValue,
  ...(row.executor_session_id !== null && { executorSessionId: row.executor_session_id }),
  updatedAt: row.updated_at,
});

const syncSelect = ({ builder, dialect }: SqlTarget) =>
  builder
    .selectFrom("sync_states as x")
    .select(["x.agent", dialect.jsonText("x.cursor").as("cursor"), "x.executor_session_id", "x.updated_at"]);

const syncStateOfAgent = preparedQuery<{ session_id: string; agent: string }, SyncRow>((database, p) =>
  syncSelect(database).where("x.session_id", "=", p("session_id")).where("x.agent", "=", p("agent")),
);

/** One agent's sync state of a session. */
export async function readSyncState(
  database: SqlDatabase,
  queries: SqlQueries,
  sessionId: string,
  agent: string,
): Promise<SyncState | undefined> {
  const row = await queries.first<SyncRow>(syncStateOfAgent.bind(database, { session_id: sessionId, agent }));
  return row && syncStateOf(row, database.location);
}

interface SyncValues {
  readonly session_id: string;
  readonly agent: string;
  readonly cursor: string;
  readonly executor_session_id: string | null;
  readonly updated_at: string;
}

const upsertSyncState = preparedQuery<SyncValues, never>(({ builder }, p) =>
  builder
    .insertInto("sync_states")
    .values({
      session_id: p("session_id"),
      agent: p("agent"),
      cursor: p("cursor"),
      executor_session_id: p("executor_session_id"),
      updated_at: p("updated_at"),
    })
    .onConflict((conflict) =>
      conflict.columns(["session_id", "agent"]).doUpdateSet((eb) => ({
        cursor: eb.ref("excluded.cursor"),
        executor_session_id: eb.ref("excluded.executor_session_id"),
        updated_at: eb.ref("excluded.updated_at"),
      })),
    ),
);

/** Inserts or replaces one agent's sync state. */
export async function writeSyncState(
  database: SqlTarget,
  queries: SqlQueries,
  sessionId: string,
  state: SyncState,
): Promise<void> {
  await queries.run(
    upsertSyncState.bind(database, {
      session_id: sessionId,
      agent: state.agent,
      cursor: JSON.stringify(state.cursor),
      executor_session_id: state.executorSessionId ?? null,
      updated_at: state.updatedAt,
    }),
  );
}

interface BlobRow {
  readonly ref: string;
  readonly media_type: string;
  readonly is_text: number | boolean;
  readonly content: Uint8Array;
}

/** The blobs (by ref, bytewise) and sync states (by agent) of a session, for its dump. */
export async function readDumpExtras(
  database: SqlDatabase,
  queries: SqlQueries,
  sessionId: string,
): Promise<{ blobs: BlobData[]; syncStates: SyncState[] }> {
  const { builder, dialect } = database;
  const blobRows = await queries.all<BlobRow>(
    builder
      .selectFrom("blob_links as l")
      .innerJoin("blobs as b", "b.ref", "l.ref")
      .select(["b.ref", "b.media_type", "b.is_text", "b.content"])
      .where("l.session_id", "=", sessionId)
      .orderBy(dialect.bytewise("b.ref")),
  );
  const blobs = blobRows.map(blobDataOf);
  const syncRows = await queries.all<SyncRow>(
    syncSelect(database).where("x.session_id", "=", sessionId).orderBy(dialect.bytewise("x.agent")),
  );
  return { blobs, syncStates: syncRows.map((row) => syncStateOf(row, database.location)) };
}

/** A stored blob by ref, whichever sessions link it (inside the caller's transaction). */
export async function readBlob(
  database: SqlDatabase,
  queries: SqlQueries,
  ref: string,
): Promise<BlobData | undefined> {
  const row = await queries.first<BlobRow>(
    database.builder
      .selectFrom("blobs as b")
      .select(["b.ref", "b.media_type", "b.is_text", "b.content"])
      .where("b.ref", "=", ref),
  );
  return row && blobDataOf(row);
}

function blobDataOf(row: BlobRow): BlobData {
  return {
    ref: row.ref,
    mediaType: row.media_type,
    isText: flagOf(row.is_text),
    bytes: bytesOf(row.content),
  };
}

const currentGovernorState = preparedQuery<{ session_id: string }, { state: string }>(
  ({ builder, dialect }, p) =>
    builder
      .selectFrom("governor_states as g")
      .innerJoin("sessions as s", (join) =>
        join.onRef("s.id", "=", "g.session_id").onRef("s.next_seq", "=", "g.next_seq"),
      )
      .select(dialect.jsonText("g.state").as("state"))
      .where("g.session_id", "=", p("session_id")),
);

/** The governor state stored with the session's latest write (undefined when a later write dropped it). */
export async function readGovernorState(
  database: SqlDatabase,
  queries: SqlQueries,
  sessionId: string,
): Promise<JsonValue | undefined> {
  const row = await queries.first<{ state: string }>(
    currentGovernorState.bind(database, { session_id: sessionId }),
  );
  return row === undefined
    ? undefined
    : (parseStored(
        row.state,
        database.location,
        `the governor state of session "${sessionId}"`,
      ) as JsonValue);
}

const upsertGovernorState = preparedQuery<{ session_id: string; next_seq: number; state: string }, never>(
  ({ builder }, p) =>
    builder
      .insertInto("governor_states")
      .values({ session_id: p("session_id"), next_seq: p("next_seq"), state: p("state") })
      .onConflict((conflict) =>
        conflict.column("session_id").doUpdateSet((eb) => ({
          next_seq: eb.ref("excluded.next_seq"),
          state: eb.ref("excluded.state"),
        })),
      ),
);

const deleteGovernorState = preparedQuery<{ session_id: string }, never>(({ builder }, p) =>
  builder.deleteFrom("governor_states").where("session_id", "=", p("session_id")),
);

/** Stores (or, with none, drops) the governor state of a session as of `nextSeq`, inside the transaction. */
export async function writeGovernorState(
  database: SqlTarget,
  queries: SqlQueries,
  sessionId: string,
  nextSeq: number,
  state: JsonValue | undefined,
): Promise<void> {
  await queries.defer(
    state === undefined
      ? deleteGovernorState.bind(database, { session_id: sessionId })
      : upsertGovernorState.bind(database, {
          session_id: sessionId,
          next_seq: nextSeq,
          state: JSON.stringify(state),
        }),
  );
}
