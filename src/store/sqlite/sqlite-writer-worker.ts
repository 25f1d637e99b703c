// The SQLite writer thread: owns the write connection and commits the writes that arrived together in one
// transaction (group commit), each in its own savepoint; answers each caller after COMMIT returned.
import { parentPort, receiveMessageOnPort, workerData } from "node:worker_threads";
import { StoreError } from "../../errors/index.ts";
import { randomIds } from "../../model/ids.ts";
import type { StoreContext } from "../store-context.ts";
import type { SqliteDatabase } from "./sqlite-database.ts";
import { openSqliteDatabase } from "./sqlite-open.ts";
import { SqliteSessionStore } from "./sqlite-session-store.ts";
import {
  serializeError,
  type WriterEvent,
  type WriterMethod,
  type WriterOpenData,
  type WriterRequest,
} from "./sqlite-writer-protocol.ts";

const port = parentPort!;
const data = workerData as WriterOpenData;
const post = (event: WriterEvent) => port.postMessage(event);

/** The time of the write being run: every request carries its caller's clock reading. */
let now = Date.now();
const context: StoreContext = {
  clock: () => new Date(now),
  // Ids are assigned by the caller (its own generator); this one only fills gaps.
  ids: randomIds,
  prices: data.prices,
  inlineMediaLimit: data.inlineMediaLimit,
};

/** Groups run so far (replies carry the number of theirs, so the store can report how writes were grouped). */
let groups = 0;
let database: SqliteDatabase | undefined;
try {
  database = openSqliteDatabase({
    path: data.path,
    busyTimeoutMs: data.busyTimeoutMs,
    synchronous: data.synchronous,
    pragmas: data.pragmas,
    integrityCheck: data.integrityCheck,
  });
  post({ type: "ready" });
} catch (error) {
  post({ type: "open-failed", error: serializeError(error) });
}

if (database) {
  const store = new SqliteSessionStore(database, context);
  port.on("message", (request: WriterRequest) => {
    // Takes the writes queued on the port behind this one too: everything that arrived joins this group.
    const batch = [request];
    for (let next = receiveMessageOnPort(port); next; next = receiveMessageOnPort(port)) {
      batch.push(next.message as WriterRequest);
    }
    void drain(database, store, batch);
  });
}

/** Commits the writes of a batch as one group and answers them in order; then closes when asked to. */
async function drain(
  database: SqliteDatabase,
  store: SqliteSessionStore,
  batch: WriterRequest[],
): Promise<void> {
  const closing = batch.findIndex((request) => request.method === "close");
  const writes = closing === -1 ? batch : batch.slice(0, closing);
  if (writes.length > 0) await commitGroup(database, store, writes);
  if (closing !== -1) {
    database.close();
    post({ type: "reply", id: batch[closing]!.id, group: ++groups, ok: true, value: undefined });
    port.close();
  }
}

interface Entry {
  readonly request: WriterRequest;
  readonly outcome: Promise<unknown>;
  /** Set when a later failure rolled back the transaction this write was part of. */
  lost?: unknown;
}

/** Runs the writes in one transaction, one savepoint each; answers after COMMIT. */
async function commitGroup(
  database: SqliteDatabase,
  store: SqliteSessionStore,
  writes: readonly WriterRequest[],
): Promise<void> {
  const entries: Entry[] = [];
  const group = ++groups;
  let groupError: unknown;
  try {
    database.group(() => {
      for (const request of writes) {
        now = request.now;
        const method = store[request.method as WriterMethod].bind(store) as (
          ...args: unknown[]
        ) => Promise<unknown>;
        // The store's methods do all their work synchronously (node:sqlite): the write is done on return.
        const outcome = method(...request.args);
        outcome.catch(() => {});
        if (!database.connection.isTransaction) {
          const lost = new StoreError(
            `${database.location}: a failing write rolled back the transaction this write was part of; retry it`,
            true,
          );
          for (const entry of entries) entry.lost ??= lost;
          // The next write starts a new transaction.
        }
        entries.push({ request, outcome });
      }
      if (!database.connection.isTransaction) database.connection.exec("BEGIN IMMEDIATE");
    });
  } catch (error) {
    groupError = error;
  }
  for (const [index, request] of writes.entries()) {
    const entry = entries[index];
    const fail = (error: unknown) =>
      post({ type: "reply", id: request.id, group, ok: false, error: serializeError(error) });
    if (!entry) {
      fail(groupError);
      continue;
    }
    try {
      const value = await entry.outcome;
      const failure = entry.lost ?? groupError;
      if (failure === undefined) post({ type: "reply", id: request.id, group, ok: true, value });
      else fail(failure);
    } catch (error) {
      // The write's own error, or a result that cannot be sent back.
      fail(error);
    }
  }
}
