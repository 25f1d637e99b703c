/**
 * The contract every session store implements (memory, SQLite, PostgreSQL). One conformance suite
 * (`conformance/describe-conformance.ts`, published as `ctxkit/conformance`) runs against each of them.
 *
 * Ordering: `seq` is append order, unique per session. Each stored row also has a `position`, its place in the
 * view: an appended message's position is its seq; a summary takes the position of the first message it
 * replaced. Loads return rows by position (then newest seq first), so a summary stands where the messages it
 * replaced stood while its own seq stays unique and newer than everything it replaced.
 */
import type { Clock, IdGenerator } from "../model/ids.ts";
import type { JsonValue, Message, MessageInput, Usage } from "../model/message.ts";
import type { BlobStore } from "./blob-store.ts";
import type { PriceTable } from "../pricing/model-prices.ts";

/** Token totals of a session, summed over provider-reported usage. */
export interface UsageTotals {
  readonly input: number;
  readonly output: number;
  readonly cacheRead: number;
  readonly cacheWrite: number;
  readonly reasoning: number;
}

/** Where an imported session came from (the `conversation` line of a ctxkit JSONL export). */
export interface SessionOrigin {
  /** Transcript format it was imported from; `ctxkit` for sessions ctxkit created. */
  readonly format: string;
  readonly source: string;
  readonly sidechain?: boolean;
}

/** Metadata values (free-form JSON). */
export type SessionMetadata = { readonly [key: string]: JsonValue };

/** One stored session. */
export interface SessionRecord {
  readonly id: string;
  /** Owner or tenant; list and search filter on it. */
  readonly owner?: string;
  /** Name of the agent that runs the session. */
  readonly agent?: string;
  /** First user prompt (≤ 100 characters) until renamed. */
  readonly title?: string;
  readonly createdAt: string;
  /** Time of the last write; retention counts from it. */
  readonly updatedAt: string;
  /** The session this one was forked from, and the seq of the message it was forked at. */
  readonly parentId?: string;
  readonly forkSeq?: number;
  /** Stored rows, summarised ones and summaries included. */
  readonly messageCount: number;
  /** Highest user turn number. */
  readonly turnCount: number;
  /** The seq the next appended message gets; pass it as `expectedNextSeq` to detect concurrent writers. */
  readonly nextSeq: number;
  readonly usage: UsageTotals;
  /** Cost in US dollars, from the price table at the time of each write. */
  readonly cost: number;
  readonly metadata: SessionMetadata;
  /** Executor session id per agent (from the sync state). */
  readonly executorSessionIds: { readonly [agent: string]: string };
  readonly origin?: SessionOrigin;
}

/** Fields of a session set when its first turn creates it. */
export interface SessionInit {
  readonly owner?: string;
  readonly agent?: string;
  /** Defaults to the first user prompt, cut to 100 characters. */
  readonly title?: string;
  readonly metadata?: SessionMetadata;
}

/** Usage not attached to any message (e.g. a summarizer's request), with the model that reported it. */
export interface ModelUsage {
  readonly model?: string;
  readonly usage: Usage;
}

/** Options of `appendTurn`. */
export interface AppendTurnOptions {
  /** The session's `nextSeq` as the caller last saw it; a different value raises `ConcurrentWriteError`. */
  readonly expectedNextSeq?: number;
  /**
   * The owner the session had when the caller loaded it (`null`: none). An existing session with another owner
   * raises `ConcurrentWriteError` and nothing is written: the session was deleted and its id reused by another
   * owner meanwhile (possible when several processes share a database). Checked in the append's transaction.
   */
  readonly expectedOwner?: string | null;
  /** Used only when this turn creates the session. */
  readonly session?: SessionInit;
  /** Usage to add to the totals besides the messages' own `usage`. */
  readonly usage?: readonly ModelUsage[];
  /**
   * Compactions to apply after the messages, in the same transaction (each as `applyCompaction` would; their own
   * `expectedNextSeq` is not used). With compactions or a governor state, `messages` may be empty.
   */
  readonly compactions?: readonly CompactionInput[];
  /**
   * The state of the session's governor after this write (opaque to the store, e.g. `Governor.snapshot()`):
   * `loadGovernorState` returns it until the session is written again without one.
   */
  readonly governorState?: JsonValue;
}

/** What `appendTurn` stored. */
export interface AppendResult {
  readonly session: SessionRecord;
  /** The stored messages with their seq, turn, id and time (inline media replaced by blob references). */
  readonly messages: readonly Message[];
  /** The summaries the append's `compactions` stored, in order. */
  readonly summaries: readonly Message[];
}

/**
 * How much history a load returns: `full` — every message not replaced by a summary; `recent` — the last
 * max(3, maxTurns / 6) turns, each reduced to its user text and final reply (CowAgent's restore rule);
 * `all` — every stored row, summarised ones included (for export and audit), in view order.
 */
export type LoadStrategy = "full" | "recent" | "all";

/** Options of `loadMessages`. */
export interface LoadOptions {
  readonly strategy?: LoadStrategy;
  /** The agent's turn budget, for `recent` (default 20, so 3 turns). */
  readonly maxTurns?: number;
  /** Exact number of turns for `recent`, overriding the max(3, maxTurns / 6) rule. */
  readonly recentTurns?: number;
  /** `ref` (default) returns media as blob references; `inline` puts the data back into the blocks. */
  readonly media?: "ref" | "inline";
}

/** Input of `applyCompaction`. */
export interface CompactionInput {
  /**
   * Seqs of the first and last message replaced. Every visible message standing between them (inclusive) is
   * marked summarised. `fromSeq` may name a message an earlier summary already replaced: the range then starts
   * where that summary stands, and the earlier summary is replaced too.
   */
  readonly fromSeq: number;
  readonly toSeq: number;
  /** The summary: a user message (its kind is set to `summary`). `summaryOf` is filled in when absent. */
  readonly summary: MessageInput;
  readonly expectedNextSeq?: number;
  /** The summarizer's usage, added to the session's totals. */
  readonly usage?: readonly ModelUsage[];
}

/** A scalar a metadata filter compares with. */
export type MetadataFilterValue = string | number | boolean | null;

/** Filters shared by list, search and latest. */
export interface SessionFilter {
  readonly owner?: string;
  /**
   * With `owner`: sessions stored without an owner match too (a server gives the sessions the CLI made to its
   * local tenant this way).
   */
  readonly includeUnowned?: boolean;
  readonly agent?: string;
  /** Every key must be present in the session's metadata with exactly this value. */
  readonly metadata?: { readonly [key: string]: MetadataFilterValue };
}

/** Options of `listSessions`. */
export interface ListOptions extends SessionFilter {
  /** Page size, 1–1000 (default 50). */
  readonly limit?: number;
  /** `nextCursor` of the previous page. */
  readonly cursor?: string;
}

/** One page of sessions, newest first. */
export interface SessionPage {
  readonly sessions: readonly SessionRecord[];
  /** Present when there are more sessions. */
  readonly nextCursor?: string;
}

/** Options of `searchSessions`. */
export interface SearchOptions extends SessionFilter {
  readonly limit?: number;
}

/** A session matching a search: by title, or by a message (the first one that matches). */
export interface SearchHit {
  readonly session: SessionRecord;
  /** Seq of the first matching message; absent when only the title matched. */
  readonly seq?: number;
  /** A short excerpt around the match. */
  readonly snippet: string;
}

/** Options of `forkSession`. */
export interface ForkOptions {
  /** Seq of the last visible message the fork keeps. */
  readonly atSeq: number;
  /** Id of the new session (default: a generated one). */
  readonly id?: string;
  /** Title of the new session (default: the parent's). */
  readonly title?: string;
}

/** How far one agent has seen a session, and its own session id there (multi-agent sync). */
export interface SyncState {
  readonly agent: string;
  readonly cursor: JsonValue;
  readonly executorSessionId?: string;
  readonly updatedAt: string;
}

/** Input of `attachCompactSummary`. */
export interface CompactSummaryInput {
  readonly messageId: string;
  readonly callId: string;
  readonly summary: string;
}

/** What `cleanup` removed. */
export interface CleanupResult {
  readonly deletedSessions: number;
  readonly deletedBlobs: number;
}

/** A stored row: the message, its place in the view, and the summary that replaced it (if any). */
export interface StoredRow {
  readonly message: Message;
  readonly position: number;
  /** Seq of the summary that replaced this row; absent while the row is visible. */
  readonly summarizedBy?: number;
}

/** A blob and its bytes, as exported. */
export interface BlobData {
  readonly ref: string;
  readonly mediaType: string;
  /** True when the blob was stored as text (read it back with `getText`). */
  readonly isText: boolean;
  readonly bytes: Uint8Array;
}

/** Everything stored for one session: what export writes and restore reads back. */
export interface SessionDump {
  readonly session: SessionRecord;
  /** Every row, in seq order. */
  readonly rows: readonly StoredRow[];
  /** Blobs linked to the session, by ref. */
  readonly blobs: readonly BlobData[];
  /** Sync states, by agent. */
  readonly syncStates: readonly SyncState[];
}

/** Options of `restoreSession`. */
export interface RestoreOptions {
  /** `error` (default) refuses to overwrite an existing session; `replace` deletes it first. */
  readonly onExisting?: "error" | "replace";
}

/** Options of `restoreSessions`. */
export interface RestoreSessionsOptions {
  /**
   * What to do when a session of the batch already exists: `error` (default) refuses the whole batch before
   * anything is written; `replace` overwrites it; `skip` leaves it as it is and lists it in `skipped`.
   */
  readonly onExisting?: "error" | "replace" | "skip";
  /** Called after each session is written (inside the transaction: nothing is committed before the end). */
  readonly onProgress?: (done: number, total: number) => void;
}

/** What `restoreSessions` wrote and left alone. */
export interface RestoreSessionsResult {
  /** The sessions written, in the order of the batch. */
  readonly restored: readonly SessionRecord[];
  /** Ids of existing sessions left as they were (`onExisting: "skip"`). */
  readonly skipped: readonly string[];
}

/**
 * Opt-in retention when a store opens. Off by default: opening a store never deletes anything unless
 * `retentionDays` is set above 0 (then sessions idle for longer are deleted, as `cleanup(retentionDays)` does,
 * and `onCleanup` is told what was removed).
 */
export interface OpenRetentionOptions {
  /** Sessions not updated for this many days are deleted when the store opens (default 0: none). */
  readonly retentionDays?: number;
  /** Called with what the retention at open removed (only when `retentionDays` is above 0). */
  readonly onCleanup?: (result: CleanupResult & { readonly olderThanDays: number }) => void;
}

/** Options every store factory accepts. */
export interface SessionStoreOptions {
  readonly clock?: Clock;
  readonly ids?: IdGenerator;
  /** Prices for cost totals (default: `DEFAULT_PRICES`). */
  readonly prices?: PriceTable;
  /** Base64 media larger than this many characters is moved to the blob store (default 1024). */
  readonly inlineMediaLimit?: number;
}

/**
 * Durable sessions. Every method is atomic: a write that fails leaves no trace.
 *
 * @example
 * const { session } = await store.appendTurn("s1", [
 *   { role: "user", content: [{ type: "text", text: "List the files" }] },
 *   { role: "assistant", content: [{ type: "text", text: "a.ts b.ts" }] },
 * ], { expectedNextSeq: 0 });
 * const messages = await store.loadMessages("s1");
 */
export interface SessionStore {
  /** Offloaded tool outputs and media, content-addressed. */
  readonly blobs: BlobStore;
  /** Writes a turn in one transaction; creates the session when the turn holds its first user message. */
  appendTurn(
    sessionId: string,
    messages: readonly MessageInput[],
    options?: AppendTurnOptions,
  ): Promise<AppendResult>;
  /** Messages in view order. Throws `NotFoundError` for an unknown session. */
  loadMessages(sessionId: string, options?: LoadOptions): Promise<Message[]>;
  /** Marks a range summarised and stores the summary in its place, in one transaction. */
  applyCompaction(sessionId: string, input: CompactionInput): Promise<Message>;
  /**
   * The governor state stored by the session's latest write (`AppendTurnOptions.governorState`), or undefined when
   * that write stored none (another writer appended or compacted since) or the session does not exist.
   */
  loadGovernorState(sessionId: string): Promise<JsonValue | undefined>;
  /**
   * Sets the `compactSummary` of tool result `callId` in stored message `messageId` (a summary computed after
   * the turn was committed), and returns the updated message. Nothing else of the message changes. Throws
   * `NotFoundError` for an unknown session, message or call.
   */
  attachCompactSummary(sessionId: string, input: CompactSummaryInput): Promise<Message>;
  /**
   * Removes the session's newest message (the row with the highest seq) and resolves with it; undefined when the
   * session does not exist or holds no row. One transaction: the row and its search words go, the message count
   * drops (the turn count too when the message opened its turn), `nextSeq` moves on by one (a writer that loaded the
   * session before gets `ConcurrentWriteError`; no seq is used twice), and the stored governor state is dropped (it
   * may name the message). Usage, cost, title and blobs stay. A newest row that is a summary or that a summary
   * replaced is refused with `CompactedMessageError` and nothing changes.
   */
  removeLastMessage(sessionId: string): Promise<Message | undefined>;
  getSession(sessionId: string): Promise<SessionRecord | undefined>;
  listSessions(options?: ListOptions): Promise<SessionPage>;
  /**
   * Sessions whose title or some message holds every word of `query` (whole words, any case), newest first, each
   * with its first matching message. A turn is found as soon as its append returns: the SQL stores index message
   * words after the turn, in the background (within about a second, and at the next open after a crash), and
   * match the rows still waiting themselves.
   */
  searchSessions(query: string, options?: SearchOptions): Promise<SearchHit[]>;
  /** The most recently updated session matching the filter (to resume it). */
  latestSession(filter?: SessionFilter): Promise<SessionRecord | undefined>;
  forkSession(sessionId: string, options: ForkOptions): Promise<SessionRecord>;
  renameSession(sessionId: string, title: string): Promise<SessionRecord>;
  /** Deletes a session, its rows, sync state and the blobs no other session uses. False when unknown. */
  deleteSession(sessionId: string): Promise<boolean>;
  /** Deletes sessions not updated for `olderThanDays` days (0 keeps everything) and unused blobs. */
  cleanup(olderThanDays: number): Promise<CleanupResult>;
  getSyncState(sessionId: string, agent: string): Promise<SyncState | undefined>;
  setSyncState(
    sessionId: string,
    agent: string,
    cursor: JsonValue,
    executorSessionId?: string,
  ): Promise<SyncState>;
  /** Everything stored for a session, for export. */
  dumpSession(sessionId: string): Promise<SessionDump>;
  /** Writes a dump back verbatim (ids, seqs, times, totals), in one transaction. */
  restoreSession(dump: SessionDump, options?: RestoreOptions): Promise<SessionRecord>;
  /**
   * Writes several dumps in one transaction: all of them or, when anything fails (a bad dump, an existing
   * session under `onExisting: "error"`, a full disk, a kill), none. A session id may appear once per batch.
   */
  restoreSessions(
    dumps: readonly SessionDump[],
    options?: RestoreSessionsOptions,
  ): Promise<RestoreSessionsResult>;
  close(): Promise<void>;
}
