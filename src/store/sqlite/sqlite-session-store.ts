import type { JsonValue, Message, MessageInput } from "../../model/message.ts";
import type { IdGenerator } from "../../model/ids.ts";
import { checkSessionId } from "../append-plan.ts";
import { checkCompactionInput } from "../compaction-plan.ts";
import type {
  AppendResult,
  AppendTurnOptions,
  CleanupResult,
  CompactionInput,
  CompactSummaryInput,
  ForkOptions,
  RestoreOptions,
  RestoreSessionsOptions,
  RestoreSessionsResult,
  SessionDump,
  SessionRecord,
  SyncState,
} from "../session-store.ts";
import { checkSyncInput, checkTitle } from "../session-updates.ts";
import { SqlBlobStore } from "../sql/sql-blob-store.ts";
import { SqlSessionStore } from "../sql/sql-session-store.ts";
import type { StoreContext } from "../store-context.ts";
import type { SqliteDatabase } from "./sqlite-database.ts";
import type { SqliteWriterClient } from "./sqlite-writer-client.ts";

/**
 * The embedded, zero-configuration session store: one SQLite file through `node:sqlite` (no native addon),
 * in WAL mode so readers never block the writer. Create it with `openSqliteSessionStore`.
 */
export class SqliteSessionStore extends SqlSessionStore {
  readonly #database: SqliteDatabase;
  readonly #context: StoreContext;
  /** The writer thread the per-turn writes go to; undefined when they run on this thread (`writer: "inline"`). */
  readonly #writer: SqliteWriterClient | undefined;

  /** @internal Use `openSqliteSessionStore`. */
  constructor(database: SqliteDatabase, context: StoreContext, writer?: SqliteWriterClient) {
    // With a writer thread, that thread indexes search words (this thread's writes are rare: forks, restores).
    super(database, context, writer && new WriterBlobStore(database, writer, context), writer === undefined);
    this.#database = database;
    this.#context = context;
    this.#writer = writer;
  }

  /** How this store writes turns: `worker` (a writer thread, group commit) or `inline` (this thread). */
  get writerMode(): "worker" | "inline" {
    return this.#writer ? "worker" : "inline";
  }

  /** Absolute path of the database file (or `:memory:`). */
  get location(): string {
    return this.#database.location;
  }

  /** @internal Writes answered by the writer thread and the transactions they took (undefined when inline). */
  get writerStats(): { readonly writes: number; readonly groups: number } | undefined {
    return this.#writer?.stats;
  }

  /** @internal The connection, for tests and tools that inspect the file. */
  get database(): SqliteDatabase {
    return this.#database;
  }

  override async appendTurn(
    sessionId: string,
    messages: readonly MessageInput[],
    options: AppendTurnOptions = {},
  ): Promise<AppendResult> {
    if (!this.#writer) return super.appendTurn(sessionId, messages, options);
    checkSessionId(sessionId);
    const ids = this.#context.ids;
    const args = [sessionId, withMessageIds(messages, ids), withCompactionIds(options, ids)];
    return this.#writer.call("appendTurn", args, this.#context.clock());
  }

  override async applyCompaction(sessionId: string, input: CompactionInput): Promise<Message> {
    if (!this.#writer) return super.applyCompaction(sessionId, input);
    const checked = checkCompactionInput(input);
    const args = [sessionId, withSummaryId(checked, this.#context.ids)];
    return this.#writer.call("applyCompaction", args, this.#context.clock());
  }

  override async attachCompactSummary(sessionId: string, input: CompactSummaryInput): Promise<Message> {
    if (!this.#writer) return super.attachCompactSummary(sessionId, input);
    return this.#writer.call("attachCompactSummary", [sessionId, input], this.#context.clock());
  }

  override async renameSession(sessionId: string, title: string): Promise<SessionRecord> {
    if (!this.#writer) return super.renameSession(sessionId, title);
    const checked = checkTitle(title);
    return this.#writer.call("renameSession", [sessionId, checked], this.#context.clock());
  }

  override async deleteSession(sessionId: string): Promise<boolean> {
    if (!this.#writer) return super.deleteSession(sessionId);
    return this.#writer.call("deleteSession", [sessionId], this.#context.clock());
  }

  override async removeLastMessage(sessionId: string): Promise<Message | undefined> {
    if (!this.#writer) return super.removeLastMessage(sessionId);
    return this.#writer.call("removeLastMessage", [sessionId], this.#context.clock());
  }

  override async setSyncState(
    sessionId: string,
    agent: string,
    cursor: JsonValue,
    executorSessionId?: string,
  ): Promise<SyncState> {
    if (!this.#writer) return super.setSyncState(sessionId, agent, cursor, executorSessionId);
    checkSyncInput(agent, cursor, executorSessionId);
    const args = [sessionId, agent, cursor, executorSessionId];
    return this.#writer.call("setSyncState", args, this.#context.clock());
  }

  override async flushSearchIndex(): Promise<void> {
    if (!this.#writer) return super.flushSearchIndex();
    await this.#writer.call("flushSearchIndex", [], this.#context.clock());
  }

  // Writes that stay on this thread wait for the writer thread's queue first, so they see its writes.

  override async forkSession(sessionId: string, options: ForkOptions): Promise<SessionRecord> {
    await this.#writer?.idle();
    return super.forkSession(sessionId, options);
  }

  override async cleanup(olderThanDays: number): Promise<CleanupResult> {
    await this.#writer?.idle();
    return super.cleanup(olderThanDays);
  }

  override async restoreSession(dump: SessionDump, options: RestoreOptions = {}): Promise<SessionRecord> {
    await this.#writer?.idle();
    return super.restoreSession(dump, options);
  }

  override async restoreSessions(
    dumps: readonly SessionDump[],
    options: RestoreSessionsOptions = {},
  ): Promise<RestoreSessionsResult> {
    await this.#writer?.idle();
    return super.restoreSessions(dumps, options);
  }

  override async close(): Promise<void> {
    await this.#writer?.close();
    await super.close();
  }
}

/** Messages with an id each (drawn from the caller's generator, in the order an inline write would draw them). */
function withMessageIds(messages: readonly MessageInput[], ids: IdGenerator): readonly MessageInput[] {
  if (!Array.isArray(messages)) return messages;
  return messages.map((message: MessageInput) =>
    isObject(message) && message.id === undefined ? { ...message, id: ids("msg") } : message,
  );
}

/** Append options whose compaction summaries have ids. */
function withCompactionIds(options: AppendTurnOptions, ids: IdGenerator): AppendTurnOptions {
  if (!isObject(options) || !Array.isArray(options.compactions)) return options;
  return { ...options, compactions: options.compactions.map((input) => withSummaryId(input, ids)) };
}

function withSummaryId(input: CompactionInput, ids: IdGenerator): CompactionInput {
  if (!isObject(input) || !isObject(input.summary) || input.summary.id !== undefined) return input;
  return { ...input, summary: { ...input.summary, id: ids("sum") } };
}

const isObject = (value: unknown): value is object => typeof value === "object" && value !== null;

/**
 * The blob store of a SQLite store with a writer thread: reads on this thread, writes (an offloaded tool output,
 * the governor's rewritten messages) committed by the writer thread with the turns around them, so a blob write
 * never stalls this thread's event loop on an fsync.
 */
class WriterBlobStore extends SqlBlobStore {
  readonly #writer: SqliteWriterClient;
  readonly #context: StoreContext;

  constructor(database: SqliteDatabase, writer: SqliteWriterClient, context: StoreContext) {
    super(database);
    this.#writer = writer;
    this.#context = context;
  }

  override putText(sessionId: string, text: string, mediaType = "text/plain"): Promise<string> {
    return this.#writer.call("putBlobText", [sessionId, text, mediaType], this.#context.clock());
  }

  override putBytes(sessionId: string, bytes: Uint8Array, mediaType: string): Promise<string> {
    return this.#writer.call("putBlobBytes", [sessionId, bytes, mediaType], this.#context.clock());
  }

  override delete(sessionId: string, ref: string): Promise<boolean> {
    return this.#writer.call("deleteBlob", [sessionId, ref], this.#context.clock());
  }
}
