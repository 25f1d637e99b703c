/**
 * The tables of a ctxkit database as Kysely sees them. SQLite and PostgreSQL hold the same columns; where their
 * types differ (JSON text or json, integer or boolean flags, bigint totals read as strings) the type says both,
 * and `StoreDialect` converts. Columns only one dialect has are optional on insert.
 */
import type { ColumnType, Generated } from "kysely";

/** JSON written as text; read as text through `StoreDialect.jsonText`. */
type JsonText = ColumnType<string, string, string>;
/** An integer PostgreSQL returns as a string (`bigint`). */
type BigCount = ColumnType<number | string, number, number>;
/** Present in one dialect only: never selected by shared code, optional on insert. */
type OneDialect<T> = ColumnType<T, T | undefined, T>;

export interface SessionsTable {
  id: string;
  owner: string | null;
  agent: string | null;
  title: string | null;
  title_words: string;
  created_at: string;
  updated_at: string;
  parent_id: string | null;
  fork_seq: number | null;
  message_count: number;
  turn_count: number;
  next_seq: number;
  input_tokens: BigCount;
  output_tokens: BigCount;
  cache_read_tokens: BigCount;
  cache_write_tokens: BigCount;
  reasoning_tokens: BigCount;
  cost: number;
  /** SQLite: the metadata as written. PostgreSQL: a `jsonb` copy for `@>` filters (keys reordered). */
  metadata: JsonText;
  origin: string | null;
  /** PostgreSQL: the metadata as written (`json`). */
  metadata_json: OneDialect<string>;
}

export interface MessagesTable {
  /** SQLite: the rowid, which keys the FTS5 words. */
  row_id: Generated<number>;
  session_id: string;
  seq: number;
  position: number;
  turn: number;
  id: string;
  role: string;
  kind: string | null;
  tokens: number | null;
  summarized_by: number | null;
  created_at: string;
  body: JsonText;
}

/**
 * The index of message words. SQLite: FTS5, contentless, keyed by `messages.row_id` (`rowid`). PostgreSQL:
 * `(session_id, seq, words tsvector)` rows (read through `dialect.table` in `sql` templates).
 */
export interface WordsTable {
  rowid: number;
  words: string;
}

export interface BlobsTable {
  ref: string;
  media_type: string;
  /** SQLite 0/1, PostgreSQL boolean. */
  is_text: ColumnType<number | boolean, number | boolean, number | boolean>;
  size: number;
  content: Uint8Array;
}

export interface BlobLinksTable {
  session_id: string;
  ref: string;
}

export interface SyncStatesTable {
  session_id: string;
  agent: string;
  cursor: JsonText;
  executor_session_id: string | null;
  updated_at: string;
}

export interface GovernorStatesTable {
  session_id: string;
  next_seq: number;
  state: JsonText;
}

export interface MemoriesTable {
  /** SQLite: the rowid, which keys the FTS5 words. */
  row_id: Generated<number>;
  id: string;
  owner: string;
  kind: string;
  scope: string;
  content: string;
  normalized: string;
  shingle_count: number;
  source_session_id: string | null;
  created_at: string;
  updated_at: string;
  expires_at: string | null;
  metadata: JsonText;
  /** PostgreSQL: the search words (`tsvector`). */
  words: OneDialect<unknown>;
}

export interface MemoryVersionsTable {
  owner: string;
  version: BigCount;
}

/** PostgreSQL: the schema versions applied (SQLite keeps its version in `PRAGMA user_version`). */
export interface CtxkitSchemaTable {
  version: number;
}

/** Every table of a ctxkit database. */
export interface StoreTables {
  sessions: SessionsTable;
  messages: MessagesTable;
  message_words: WordsTable;
  blobs: BlobsTable;
  blob_links: BlobLinksTable;
  sync_states: SyncStatesTable;
  governor_states: GovernorStatesTable;
  memories: MemoriesTable;
  memory_words: WordsTable;
  memory_versions: MemoryVersionsTable;
  ctxkit_schema: CtxkitSchemaTable;
}
