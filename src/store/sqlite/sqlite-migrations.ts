/**
 * The SQLite schema of a ctxkit database, numbered for the one migrator (../sql/schema-migrator.ts). The version
 * lives in `PRAGMA user_version`; `PRAGMA application_id` marks the file as ctxkit's.
 */
import type { Migration } from "../sql/schema-migrator.ts";

const version1 = `
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  owner TEXT,
  agent TEXT,
  title TEXT,
  title_words TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  parent_id TEXT,
  fork_seq INTEGER,
  message_count INTEGER NOT NULL,
  turn_count INTEGER NOT NULL,
  next_seq INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cache_read_tokens INTEGER NOT NULL,
  cache_write_tokens INTEGER NOT NULL,
  reasoning_tokens INTEGER NOT NULL,
  cost REAL NOT NULL,
  metadata TEXT NOT NULL,
  origin TEXT
);
CREATE INDEX sessions_by_update ON sessions (updated_at DESC, id DESC);
CREATE INDEX sessions_by_owner ON sessions (owner, updated_at DESC, id DESC);
CREATE INDEX sessions_by_agent ON sessions (agent, updated_at DESC, id DESC);
CREATE INDEX sessions_by_parent ON sessions (parent_id) WHERE parent_id IS NOT NULL;

CREATE TABLE messages (
  row_id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  position INTEGER NOT NULL,
  turn INTEGER NOT NULL,
  id TEXT NOT NULL,
  role TEXT NOT NULL,
  kind TEXT,
  tokens INTEGER,
  summarized_by INTEGER,
  created_at TEXT NOT NULL,
  body TEXT NOT NULL,
  UNIQUE (session_id, seq),
  UNIQUE (session_id, id)
);
CREATE INDEX messages_by_position ON messages (session_id, position, seq DESC);
CREATE INDEX messages_by_turn ON messages (session_id, turn);

CREATE VIRTUAL TABLE message_words USING fts5 (words, tokenize = 'ascii', content = '', contentless_delete = 1);

CREATE TABLE blobs (
  ref TEXT PRIMARY KEY,
  media_type TEXT NOT NULL,
  is_text INTEGER NOT NULL,
  size INTEGER NOT NULL,
  content BLOB NOT NULL
);
CREATE TABLE blob_links (
  session_id TEXT NOT NULL,
  ref TEXT NOT NULL REFERENCES blobs (ref),
  PRIMARY KEY (session_id, ref)
) WITHOUT ROWID;
CREATE INDEX blob_links_by_ref ON blob_links (ref);

CREATE TABLE sync_states (
  session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  agent TEXT NOT NULL,
  cursor TEXT NOT NULL,
  executor_session_id TEXT,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (session_id, agent)
) WITHOUT ROWID;
`;

// Each session's governor state as of its latest write (`next_seq` then), so a restarted process governs on.
const version2 = `
CREATE TABLE governor_states (
  session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
  next_seq INTEGER NOT NULL,
  state TEXT NOT NULL
) WITHOUT ROWID;
`;

// The long-term memory tables (src/memory), which used to keep their own version in a `memory_schema` table: a
// file whose memory store already created them keeps them (IF NOT EXISTS) and loses only that second record.
const version3 = `
CREATE TABLE IF NOT EXISTS memories (
  row_id INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  owner TEXT NOT NULL,
  kind TEXT NOT NULL,
  scope TEXT NOT NULL,
  content TEXT NOT NULL,
  normalized TEXT NOT NULL,
  shingle_count INTEGER NOT NULL,
  source_session_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  expires_at TEXT,
  metadata TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_by_owner ON memories (owner, updated_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS memories_for_dedupe ON memories (owner, scope, kind, shingle_count);
CREATE INDEX IF NOT EXISTS memories_by_session ON memories (source_session_id) WHERE source_session_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS memories_by_expiry ON memories (expires_at) WHERE expires_at IS NOT NULL;

CREATE VIRTUAL TABLE IF NOT EXISTS memory_words USING fts5 (words, tokenize = 'ascii', content = '', contentless_delete = 1);

CREATE TABLE IF NOT EXISTS memory_versions (
  owner TEXT PRIMARY KEY,
  version INTEGER NOT NULL
) WITHOUT ROWID;
DROP TABLE IF EXISTS memory_schema;
`;

// Message words are indexed in batches (sqlite-message-words.ts): every message row up to \`indexed_to\` is in
// \`message_words\`, the rows after it are not yet (search reads those itself). Rows already stored are indexed.
// (IF NOT EXISTS, OR IGNORE: a file whose version record was set back keeps the mark it has.)
const version4 = `
CREATE TABLE IF NOT EXISTS message_words_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  indexed_to INTEGER NOT NULL
);
INSERT OR IGNORE INTO message_words_state (id, indexed_to) SELECT 1, coalesce(max(row_id), 0) FROM messages;
`;

/** The migrations of a ctxkit SQLite database, in order. */
export const SQLITE_MIGRATIONS: readonly Migration[] = [
  { version: 1, sql: version1 },
  { version: 2, sql: version2 },
  { version: 3, sql: version3 },
  { version: 4, sql: version4 },
];
