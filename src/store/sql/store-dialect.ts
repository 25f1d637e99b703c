/**
 * What differs between ctxkit's SQLite and PostgreSQL databases, in one place: how JSON and flags are stored and
 * read back, how message and memory words are indexed and searched (FTS5 or a `tsvector`), how metadata is
 * filtered, bytewise ordering, advisory locks and unique-violation codes. Everything else is shared SQL.
 */
import type { RawBuilder, SqlBool } from "kysely";
import type { JsonValue } from "../../model/message.ts";
import type { SessionRecord, StoredRow } from "../session-store.ts";
import type { SessionRow } from "./session-rows.ts";
import type { SqlQueries, SqlTarget } from "./sql-database.ts";
import type { StoreTables } from "./store-tables.ts";

/** A metadata filter: every key must hold exactly this value. */
export type MetadataFilter = Readonly<Record<string, JsonValue>>;

/** The differences the shared store code asks a dialect about. */
export interface StoreDialect {
  readonly name: "sqlite" | "postgres";
  /** A table for `sql` templates (PostgreSQL: qualified with the store's schema). */
  table(name: keyof StoreTables): RawBuilder<unknown>;
  /** A JSON column (`alias.column`) read back as the text that was written. */
  jsonText(column: string): RawBuilder<string>;
  /** The session's metadata as written (alias `s`), as text. */
  readonly sessionMetadata: RawBuilder<string>;
  /** The columns a session insert adds besides the shared ones (PostgreSQL: `metadata_json`). */
  sessionExtras(metadata: string): { metadata_json?: string };
  /** A JSON object text `{ agent: executorSessionId }` of session `s` (null when it has none). */
  readonly executorsJson: RawBuilder<string | null>;
  /** A boolean as the dialect stores it. */
  flag(value: boolean): number | boolean;
  /** Bytes as the driver takes them. */
  bytes(value: Uint8Array): Uint8Array;
  /** A column compared byte by byte (for orders that must agree across dialects). */
  bytewise(column: string): RawBuilder<string>;
  /** `haystack` holds `needle` (both text expressions or values). */
  contains(haystack: RawBuilder<string>, needle: string): RawBuilder<SqlBool>;
  /** Conditions on session `s` for a metadata filter. */
  metadataConditions(metadata: MetadataFilter): RawBuilder<SqlBool>[];

  /**
   * Inserts message rows, queued for their search words (indexed later by `indexWaitingWords`, in a transaction
   * of its own); given `totals`, also writes that record's counters, usage, cost and time to its session row (as
   * `updateSessionTotals`; PostgreSQL: in the same statement).
   */
  insertMessages(
    database: SqlTarget,
    queries: SqlQueries,
    rows: readonly StoredRow[],
    totals?: SessionRecord,
  ): Promise<void>;
  /**
   * Appends `rows` (a turn) to a session stored as `expected`, moving its totals on to `next`'s and storing its
   * governor state (dropping the stored one when `governorState` is undefined), in one statement that takes the
   * session's lock: only when the stored session's totals and owner are still `expected`'s; resolves with its
   * row after the write, or undefined when it is not as expected (then nothing is written). Absent where a
   * statement more costs no round trip (SQLite).
   */
  appendKnown?(
    database: SqlTarget,
    queries: SqlQueries,
    expected: SessionRecord,
    next: SessionRecord,
    rows: readonly StoredRow[],
    governorState: JsonValue | undefined,
  ): Promise<SessionRow | undefined>;
  /**
   * Creates session `session` (a new record, its totals those after `rows`) with its first turn `rows` and its
   * governor state, in one statement that takes the session's lock: only when no session of that id is stored
   * (then nothing is written); resolves with whether it created it. Absent where a statement more costs no
   * round trip (SQLite).
   */
  appendFirst?(
    database: SqlTarget,
    queries: SqlQueries,
    session: SessionRecord,
    rows: readonly StoredRow[],
    governorState: JsonValue | undefined,
  ): Promise<boolean>;
  /**
   * Indexes the search words of up to `limit` queued message rows, oldest first, and takes them off the queue,
   * inside the caller's write transaction; returns how many it took (0 when none waits).
   */
  indexWaitingWords(database: SqlTarget, queries: SqlQueries, limit: number): Promise<number>;
  /**
   * Runs before a session's messages are deleted: deletes their search words (SQLite), or locks the rows by seq,
   * the order the search drain locks them in (PostgreSQL, whose words go with the rows).
   */
  beforeDeletingMessages(database: SqlTarget, queries: SqlQueries, sessionId: string): Promise<void>;
  /** Deletes the search words of one message row, before the row goes (PostgreSQL: they go with it). */
  deleteRowWords(database: SqlTarget, queries: SqlQueries, sessionId: string, seq: number): Promise<void>;
  /**
   * Sessions with a message holding every term, and the first such message: rows `(session_id, seq)`, to be
   * joined as `h`. The queued rows the text index does not hold yet are matched first, with `queries` (inside
   * the search's read snapshot, in which a row is either queued or indexed).
   */
  messageHits(
    database: SqlTarget,
    queries: SqlQueries,
    terms: readonly string[],
  ): Promise<RawBuilder<{ session_id: string; seq: number }>>;

  /** Inserts a memory row (given as column values) and its search words. */
  insertMemory(database: SqlTarget, queries: SqlQueries, row: MemoryRowValues): Promise<void>;
  /** Rewrites memory `row.id` and its search words. */
  replaceMemory(database: SqlTarget, queries: SqlQueries, row: MemoryRowValues): Promise<void>;
  /** Deletes the search words of the memories matching `condition` (on alias `m`), before the memories go. */
  deleteMemoryWords(database: SqlTarget, queries: SqlQueries, condition: RawBuilder<SqlBool>): Promise<void>;
  /** Memories (alias `m`) holding any of the terms, and an order from best to worst text match. */
  memoryMatches(terms: readonly string[]): {
    from: RawBuilder<unknown>;
    where: RawBuilder<SqlBool>;
    rank: RawBuilder<unknown>;
  };

  /** Serialises writers of `key` until the transaction ends (PostgreSQL); a no-op where writers are serial. */
  lock(queries: SqlQueries, key: string): Promise<void>;
  /** True for a UNIQUE or PRIMARY KEY violation. */
  isUniqueViolation(error: unknown): boolean;
}

/** A memory's columns as written. */
export interface MemoryRowValues {
  readonly id: string;
  readonly owner: string;
  readonly kind: string;
  readonly scope: string;
  readonly content: string;
  readonly normalized: string;
  readonly shingle_count: number;
  readonly source_session_id: string | null;
  readonly created_at: string;
  readonly updated_at: string;
  readonly expires_at: string | null;
  readonly metadata: string;
}
