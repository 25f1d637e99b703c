// The SQLite writer thread: owns the write connection and commits the writes that arrived together in one
// transaction (group commit), each in its own savepoint; answers each caller after COMMIT returned. The store's
// writes are async (Kysely): each runs to its end inside its savepoint before the next begins.
import { parentPort, receiveMessageOnPort, workerData } from "node:worker_threads";
import { StoreError } from "../../errors/index.ts";
import { randomIds } from "../../model/ids.ts";
import type { StoreContext } from "../store-context.ts";
import type { SqliteDatabase } from "./sqlite-database.ts";
import { SqlSessionStore } from "../sql/sql-session-store.ts";
import { openSqliteDatabase } from "./sqlite-open.ts";
import { SQLITE_SESSION_TABLES_VERSION } from "./sqlite-schema.ts";
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
  database = await openSqliteDatabase(
    {
      path: data.path,
      busyTimeoutMs: data.busyTimeoutMs,
      synchronous: data.synchronous,
      pragmas: data.pragmas,
      integrityCheck: data.integrityCheck,
    },
    SQLITE_SESSION_TABLES_VERSION,
  );
  post({ type: "ready" });
} catch (error) {
  post({ type: "open-failed", error: serializeError(error) });
}

if (database) {
  const open = database;
  const store = new SqlSessionStore(open, context);
  store.startIndexing();
  const queue: WriterRequest[] = [];
  let running = false;
  /** Commits group after group while writes are queued: each group takes every write that arrived before it began. */
  const run = async () => {
    running = true;
    try {
      while (queue.length > 0) {
        for (let next = receiveMessageOnPort(port); next; next = receiveMessageOnPort(port)) {
          queue.push(next.message as WriterRequest);
        }
        if (await drain(open, store, queue.splice(0))) return;
        // Search words are indexed between groups, never inside one (a batch at a time).
        await store.catchUpSearchIndex();
      }
    } finally {
      running = false;
    }
  };
  port.on("message", (request: WriterRequest) => {
    queue.push(request);
    if (!running) void run();
  });
}

/** Commits the writes of a batch as one group and answers them in order; then closes when asked to (true). */
async function drain(
  database: SqliteDatabase,
  store: SqlSessionStore,
  batch: WriterRequest[],
): Promise<boolean> {
  const closing = batch.findIndex((request) => request.method === "close");
  const requests = closing === -1 ? batch : batch.slice(0, closing);
  // A flush indexes search words in transactions of its own, after the group of the writes posted with it.
  const writes = requests.filter((request) => request.method !== "flushSearchIndex");
  if (writes.length > 0) await commitGroup(database, store, writes);
  for (const request of requests) {
    if (request.method !== "flushSearchIndex") continue;
    const group = ++groups;
    await store.flushSearchIndex().then(
      () => post({ type: "reply", id: request.id, group, ok: true, value: undefined }),
      (error: unknown) =>
        post({ type: "reply", id: request.id, group, ok: false, error: serializeError(error) }),
    );
  }
  if (closing === -1) return false;
  await store.close();
  post({ type: "reply", id: batch[closing]!.id, group: ++groups, ok: true, value: undefined });
  port.close();
  return true;
}

interface Entry {
  readonly request: WriterRequest;
  readonly outcome:
    { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };
  /** Set when a later failure rolled back the transaction this write was part of. */
  lost?: unknown;
}

/**
 * Runs the writes in one transaction, one after the other, each in its own savepoint (a write's async steps
 * all run inside it); answers each after COMMIT.
 */
async function commitGroup(
  database: SqliteDatabase,
  store: SqlSessionStore,
  writes: readonly WriterRequest[],
): Promise<void> {
  const entries: Entry[] = [];
  const group = ++groups;
  let groupError: unknown;
  try {
    await database.group(async () => {
      for (const request of writes) {
        now = request.now;
        let outcome: Entry["outcome"];
        try {
          outcome = { ok: true, value: await perform(store, request) };
        } catch (error) {
          outcome = { ok: false, error };
        }
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
    if (!entry.outcome.ok) {
      fail(entry.outcome.error);
      continue;
    }
    const failure = entry.lost ?? groupError;
    if (failure !== undefined) {
      fail(failure);
      continue;
    }
    try {
      post({ type: "reply", id: request.id, group, ok: true, value: entry.outcome.value });
    } catch (error) {
      // A result that cannot be sent back.
      fail(error);
    }
  }
}

/** Runs one write on the store (a store method, or a blob write on its blob store). */
function perform(store: SqlSessionStore, request: WriterRequest): Promise<unknown> {
  const args = request.args;
  switch (request.method) {
    case "putBlobText":
      return store.blobs.putText(args[0] as string, args[1] as string, args[2] as string | undefined);
    case "putBlobBytes":
      return store.blobs.putBytes(args[0] as string, args[1] as Uint8Array, args[2] as string);
    case "deleteBlob":
      return store.blobs.delete(args[0] as string, args[1] as string);
    default: {
      const method = store[request.method as WriterMethod].bind(store) as (
        ...methodArgs: unknown[]
      ) => Promise<unknown>;
      return method(...args);
    }
  }
}
