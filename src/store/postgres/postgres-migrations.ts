/**
 * The PostgreSQL schema of a ctxkit database, numbered for the one migrator (../sql/schema-migrator.ts); tables
 * are written `{name}` and qualified with the store's schema. Message bodies are `json` (not `jsonb`) because
 * `json` keeps key order, which keeps exports byte-identical. Session metadata is kept twice: `metadata`
 * (`jsonb`, for `@>` filters; it reorders keys) and, since version 2, `metadata_json` (`json`, as written; what
 * loads read).
 */
import type { Migration } from "../sql/schema-migrator.ts";

const version1 = `
CREATE TABLE {sessions} (
  id text COLLATE "C" PRIMARY KEY,
  owner text,
  agent text,
  title text,
  title_words text NOT NULL DEFAULT '',
  created_at text NOT NULL,
  updated_at text COLLATE "C" NOT NULL,
  parent_id text,
  fork_seq integer,
  message_count integer NOT NULL,
  turn_count integer NOT NULL,
  next_seq integer NOT NULL,
  input_tokens bigint NOT NULL,
  output_tokens bigint NOT NULL,
  cache_read_tokens bigint NOT NULL,
  cache_write_tokens bigint NOT NULL,
  reasoning_tokens bigint NOT NULL,
  cost double precision NOT NULL,
  metadata jsonb NOT NULL,
  origin json
);
CREATE INDEX sessions_by_update ON {sessions} (updated_at DESC, id DESC);
CREATE INDEX sessions_by_owner ON {sessions} (owner, updated_at DESC, id DESC);
CREATE INDEX sessions_by_agent ON {sessions} (agent, updated_at DESC, id DESC);
CREATE INDEX sessions_by_parent ON {sessions} (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX sessions_by_metadata ON {sessions} USING gin (metadata jsonb_path_ops);

CREATE TABLE {messages} (
  session_id text COLLATE "C" NOT NULL REFERENCES {sessions} (id) ON DELETE CASCADE,
  seq integer NOT NULL,
  position integer NOT NULL,
  turn integer NOT NULL,
  id text NOT NULL,
  role text NOT NULL,
  kind text,
  tokens integer,
  summarized_by integer,
  created_at text NOT NULL,
  body json NOT NULL,
  words tsvector NOT NULL,
  PRIMARY KEY (session_id, seq),
  UNIQUE (session_id, id)
);
CREATE INDEX messages_by_position ON {messages} (session_id, position, seq DESC);
CREATE INDEX messages_by_turn ON {messages} (session_id, turn);
CREATE INDEX messages_by_words ON {messages} USING gin (words);

CREATE TABLE {blobs} (
  ref text PRIMARY KEY,
  media_type text NOT NULL,
  is_text boolean NOT NULL,
  size integer NOT NULL,
  content bytea NOT NULL
);
CREATE TABLE {blob_links} (
  session_id text NOT NULL,
  ref text NOT NULL REFERENCES {blobs} (ref),
  PRIMARY KEY (session_id, ref)
);
CREATE INDEX blob_links_by_ref ON {blob_links} (ref);

CREATE TABLE {sync_states} (
  session_id text NOT NULL REFERENCES {sessions} (id) ON DELETE CASCADE,
  agent text COLLATE "C" NOT NULL,
  cursor json NOT NULL,
  executor_session_id text,
  updated_at text NOT NULL,
  PRIMARY KEY (session_id, agent)
);
`;

// jsonb sorts object keys, so metadata read back from it exported differently from SQLite's. Rows written
// before this migration keep jsonb's order (the original is gone).
const version2 = `
ALTER TABLE {sessions} ADD COLUMN metadata_json json;
UPDATE {sessions} SET metadata_json = metadata::json;
ALTER TABLE {sessions} ALTER COLUMN metadata_json SET NOT NULL;
`;

// Each session's governor state as of its latest write (`next_seq` then), so a restarted process governs on.
// json, not jsonb: a state is read back with its keys in the order it was written.
const version3 = `
CREATE TABLE {governor_states} (
  session_id text PRIMARY KEY REFERENCES {sessions} (id) ON DELETE CASCADE,
  next_seq integer NOT NULL,
  state json NOT NULL
);
`;

// The long-term memory tables (src/memory), which used to keep their own version in a `memory_schema` table: a
// schema whose memory store already created them keeps them (IF NOT EXISTS) and loses only that second record.
// Metadata is `json` (not `jsonb`), which keeps key order.
const version4 = `
CREATE TABLE IF NOT EXISTS {memories} (
  id text COLLATE "C" PRIMARY KEY,
  owner text COLLATE "C" NOT NULL,
  kind text NOT NULL,
  scope text NOT NULL,
  content text NOT NULL,
  normalized text NOT NULL,
  shingle_count integer NOT NULL,
  source_session_id text COLLATE "C",
  created_at text COLLATE "C" NOT NULL,
  updated_at text COLLATE "C" NOT NULL,
  expires_at text COLLATE "C",
  metadata json NOT NULL,
  words tsvector NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_by_owner ON {memories} (owner, updated_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS memories_for_dedupe ON {memories} (owner, scope, kind, shingle_count);
CREATE INDEX IF NOT EXISTS memories_by_session ON {memories} (source_session_id) WHERE source_session_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS memories_by_expiry ON {memories} (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS memories_by_words ON {memories} USING gin (words);

CREATE TABLE IF NOT EXISTS {memory_versions} (
  owner text COLLATE "C" PRIMARY KEY,
  version bigint NOT NULL
);
DROP TABLE IF EXISTS {memory_schema};
`;

// Message words leave the turn's transaction: a turn queues the range of seqs it wrote (message_words_queue), and
// a drain writes their words to message_words afterwards, in a transaction of its own (postgres-store-dialect.ts).
// The words already stored move over; the column and its index go.
const version5 = `
CREATE TABLE {message_words} (
  session_id text COLLATE "C" NOT NULL,
  seq integer NOT NULL,
  words tsvector NOT NULL,
  PRIMARY KEY (session_id, seq),
  FOREIGN KEY (session_id, seq) REFERENCES {messages} (session_id, seq) ON DELETE CASCADE
);
INSERT INTO {message_words} (session_id, seq, words)
  SELECT session_id, seq, words FROM {messages} WHERE words <> ''::tsvector;
CREATE INDEX message_words_by_words ON {message_words} USING gin (words);
ALTER TABLE {messages} DROP COLUMN words;
CREATE TABLE {message_words_queue} (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  session_id text COLLATE "C" NOT NULL,
  from_seq integer NOT NULL,
  to_seq integer NOT NULL
);
`;

// A message row no longer checks its session's row (a key-share lock of it, per row, in every turn: a quarter of
// the turn's statement): every writer of a session holds its advisory lock and writes the session row before or
// with its rows, and a delete removes the rows itself (sql-session-store.ts).
const version6 = `
ALTER TABLE {messages} DROP CONSTRAINT IF EXISTS messages_session_id_fkey;
`;

/** The migrations of a ctxkit PostgreSQL schema, in order. */
export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  { version: 1, sql: version1 },
  { version: 2, sql: version2 },
  { version: 3, sql: version3 },
  { version: 4, sql: version4 },
  { version: 5, sql: version5 },
  { version: 6, sql: version6 },
];
