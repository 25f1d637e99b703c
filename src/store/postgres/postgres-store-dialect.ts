/**
 * PostgreSQL's side of `StoreDialect`: JSON columns are `json` (which keeps key order, so exports stay
 * byte-identical) read back as text, flags are booleans, and message and memory words are a GIN-indexed
 * `tsvector` built from ctxkit's own normalised words (`array_to_tsvector`) and queried with quoted lexemes, so
 * no text-search configuration changes them. A message's words are not written with it: its turn queues the
 * range of seqs it wrote (`message_words_queue`, in the same statement), and a drain (../sql/words-drain.ts)
 * later takes ranges off the queue and writes their words to `message_words` in one transaction, so a range is
 * either queued or indexed in any snapshot; search matches the queued rows itself. Tables in `sql` templates
 * are qualified with the store's schema.
 */
import { CompiledQuery, sql, type SqlBool } from "kysely";
import { preparedQuery } from "../sql/prepared-query.ts";
import {
  messageColumns,
  sessionTotals,
  sessionValues,
  TOTALS_COLUMNS,
  updateSessionTotals,
  type MessageColumns,
  type SessionRow,
  type SessionValues,
} from "../sql/session-rows.ts";
import type { SqlTarget } from "../sql/sql-database.ts";
import type { StoredRow } from "../session-store.ts";
import { matchingRows, queuedWords, seqRanges, type QueuedRow } from "../sql/queued-words.ts";
import type { MemoryRowValues, StoreDialect } from "../sql/store-dialect.ts";
import type { StoreTables } from "../sql/store-tables.ts";

/** First key of every ctxkit advisory lock ("ctk"). */
export const ADVISORY_LOCK_SPACE = 0x63746b;

/** SQLSTATE of a `pg` error, if any. */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * The statement taking the advisory lock of `key` (as `lock` does) with the key written into it, so it can go in
 * one simple query with BEGIN (which takes no parameters): the key travels as the hex of its UTF-8 bytes, which
 * needs no quoting whatever it holds.
 */
export function advisoryLockStatement(key: string): string {
  const hex = Buffer.from(key, "utf8").toString("hex");
  return `SELECT pg_advisory_xact_lock(${ADVISORY_LOCK_SPACE}, hashtext(convert_from(decode('${hex}', 'hex'), 'UTF8')))`;
}

const ROWS_PER_STATEMENT = 1000;

/** The shared columns of a session row and their types, for a statement that takes them as parameters. */
const SESSION_COLUMNS: readonly (readonly [keyof SessionValues, string])[] = [
  ["id", "text"],
  ["owner", "text"],
  ["agent", "text"],
  ["title", "text"],
  ["title_words", "text"],
  ["created_at", "text"],
  ["updated_at", "text"],
  ["parent_id", "text"],
  ["fork_seq", "int"],
  ["message_count", "int"],
  ["turn_count", "int"],
  ["next_seq", "int"],
  ["input_tokens", "bigint"],
  ["output_tokens", "bigint"],
  ["cache_read_tokens", "bigint"],
  ["cache_write_tokens", "bigint"],
  ["reasoning_tokens", "bigint"],
  ["cost", "float8"],
  // JSON travels as text (metadata goes to metadata_json too, as written).
  ["metadata", "text::jsonb"],
  ["origin", "text::json"],
];

const insertMemoryRow = preparedQuery<MemoryRowValues, never>(({ builder }, p) =>
  builder.insertInto("memories").values({
    id: p("id"),
    owner: p("owner"),
    kind: p("kind"),
    scope: p("scope"),
    content: p("content"),
    normalized: p("normalized"),
    shingle_count: p("shingle_count"),
    source_session_id: p("source_session_id"),
    created_at: p("created_at"),
    updated_at: p("updated_at"),
    expires_at: p("expires_at"),
    metadata: p("metadata"),
    words: sql`array_to_tsvector(string_to_array(${p("normalized")}::text, ' '))`,
  }),
);

const updateMemoryRow = preparedQuery<MemoryRowValues, never>(({ builder }, p) =>
  builder
    .updateTable("memories")
    .set({
      kind: p("kind"),
      scope: p("scope"),
      content: p("content"),
      normalized: p("normalized"),
      shingle_count: p("shingle_count"),
      source_session_id: p("source_session_id"),
      updated_at: p("updated_at"),
      expires_at: p("expires_at"),
      metadata: p("metadata"),
      words: sql`array_to_tsvector(string_to_array(${p("normalized")}::text, ' '))`,
    })
    .where("id", "=", p("id")),
);

/** The parameters of a chunk of rows for the statements that insert them: columns as arrays, then queue ranges. */
function rowParameters(chunk: readonly MessageColumns[]): unknown[] {
  const column = <T>(pick: (values: MessageColumns) => T) => chunk.map(pick);
  const ranges = seqRanges(chunk);
  return [
    column((row) => row.session_id),
    column((row) => row.seq),
    column((row) => row.position),
    column((row) => row.turn),
    column((row) => row.id),
    column((row) => row.role),
    column((row) => row.kind),
    column((row) => row.tokens),
    column((row) => row.summarized_by),
    column((row) => row.created_at),
    column((row) => row.body),
    ranges.map((range) => range.sessionId),
    ranges.map((range) => range.from),
    ranges.map((range) => range.to),
  ];
}

/** Keeps the bodies being written for the drain of their words (it then need not parse them back). */
function remember(database: SqlTarget, chunk: readonly MessageColumns[], rows: readonly StoredRow[]): void {
  chunk.forEach((columns, index) =>
    database.recentBodies?.remember(columns.session_id, columns.seq, columns.body, rows[index]!.message),
  );
}

/** A tsquery of quoted lexemes joined by `operator`. */
const tsQuery = (terms: readonly string[], operator: " & " | " | ") =>
  terms.map((term) => `'${term}'`).join(operator);

/**
 * The PostgreSQL dialect of the store for tables in `schema`.
 *
 * @example
 * const dialect = postgresStoreDialect("public");
 */
export function postgresStoreDialect(schema: string): StoreDialect & { readonly schema: string } {
  const table = (name: keyof StoreTables) => sql.id(schema, name);
  const quoted = (name: string) => `"${schema.replaceAll('"', '""')}"."${name}"`;
  // Message rows go in by the thousand, one statement per chunk, their columns as arrays, with the ranges of
  // seqs that wait for their words (message_words_queue) in the same statement.
  const insertRows = `INSERT INTO ${quoted("messages")} (session_id, seq, position, turn, id, role, kind, tokens,
      summarized_by, created_at, body)
    SELECT * FROM unnest($1::text[], $2::int[], $3::int[], $4::int[], $5::text[], $6::text[], $7::text[],
      $8::int[], $9::int[], $10::text[], $11::json[])`;
  const queueRanges = `INSERT INTO ${quoted("message_words_queue")} (session_id, from_seq, to_seq)
    SELECT * FROM unnest($12::text[], $13::int[], $14::int[])`;
  const insertMessages = `WITH inserted AS (${insertRows}) ${queueRanges}`;
  // One turn's rows, its queue entry and its session's new totals in one statement: one round trip per turn.
  const insertMessagesAndTotals = `WITH inserted AS (${insertRows}), queued AS (${queueRanges})
    UPDATE ${quoted("sessions")}
    SET ${TOTALS_COLUMNS.map((column, index) => `${column} = $${15 + index}`).join(", ")}
    WHERE id = $${15 + TOTALS_COLUMNS.length}`;
  // A turn of a session whose stored totals the writer knows, in one autocommitted statement (one round trip, no
  // BEGIN or COMMIT of its own): the session's lock (as every writer of it takes), then its totals moved on only
  // where they still are what the writer knows (the owner too), and only then its rows, their queue entry and the
  // session's governor state (stored, or dropped when the turn has none, as the transaction does). Nothing is
  // written when the session is not as known (another writer, a delete): no row comes back.
  const expected = TOTALS_COLUMNS.map((column, index) => `s.${column} = $${26 + index}`).join(" AND ");
  const appendKnown = `WITH locked AS (SELECT pg_advisory_xact_lock(${ADVISORY_LOCK_SPACE}, hashtext($25::text))),
    updated AS (UPDATE ${quoted("sessions")} s
      SET ${TOTALS_COLUMNS.map((column, index) => `${column} = $${15 + index}`).join(", ")}
      WHERE s.id = $25 AND ${expected} AND s.owner IS NOT DISTINCT FROM $${26 + TOTALS_COLUMNS.length}::text
        AND EXISTS (SELECT 1 FROM locked)
      RETURNING s.*),
    inserted AS (${insertRows} WHERE EXISTS (SELECT 1 FROM updated)),
    queued AS (${queueRanges} WHERE EXISTS (SELECT 1 FROM updated)),
    kept AS (INSERT INTO ${quoted("governor_states")} (session_id, next_seq, state)
      SELECT u.id, u.next_seq, $${27 + TOTALS_COLUMNS.length}::text::json FROM updated u
      WHERE $${27 + TOTALS_COLUMNS.length}::text IS NOT NULL
      ON CONFLICT (session_id) DO UPDATE SET next_seq = excluded.next_seq, state = excluded.state),
    dropped AS (DELETE FROM ${quoted("governor_states")} g WHERE $${27 + TOTALS_COLUMNS.length}::text IS NULL
      AND g.session_id = $25 AND EXISTS (SELECT 1 FROM updated))
    SELECT u.id, u.owner, u.agent, u.title, u.created_at, u.updated_at, u.parent_id, u.fork_seq, u.message_count,
      u.turn_count, u.next_seq, u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens,
      u.reasoning_tokens, u.cost, u.metadata_json::text AS metadata, u.origin::text AS origin,
      (SELECT json_object_agg(x.agent, x.executor_session_id ORDER BY x.agent)::text
        FROM ${quoted("sync_states")} x WHERE x.session_id = u.id AND x.executor_session_id IS NOT NULL) AS executors
    FROM updated u`;
  // A session's first turn, in one autocommitted statement: the session's lock (as every writer of it takes),
  // then its row, only where none of its id is stored (ON CONFLICT checks the index, not the statement's
  // snapshot, so a session another writer committed meanwhile is seen), and only then the turn's rows, their
  // queue entry and its governor state. Nothing is written when the session exists: no row comes back.
  const metadataParameter = 15 + SESSION_COLUMNS.findIndex(([column]) => column === "metadata");
  const firstStateParameter = `$${15 + SESSION_COLUMNS.length}::text`;
  const appendFirst = `WITH locked AS (SELECT pg_advisory_xact_lock(${ADVISORY_LOCK_SPACE}, hashtext($15::text))),
    created AS (INSERT INTO ${quoted("sessions")} (${SESSION_COLUMNS.map(([column]) => column).join(", ")},
        metadata_json)
      SELECT ${SESSION_COLUMNS.map(([, type], index) => `$${15 + index}::${type}`).join(", ")},
        $${metadataParameter}::text::json
      WHERE EXISTS (SELECT 1 FROM locked)
      ON CONFLICT (id) DO NOTHING
      RETURNING id, next_seq),
    inserted AS (${insertRows} WHERE EXISTS (SELECT 1 FROM created)),
    queued AS (${queueRanges} WHERE EXISTS (SELECT 1 FROM created)),
    kept AS (INSERT INTO ${quoted("governor_states")} (session_id, next_seq, state)
      SELECT c.id, c.next_seq, ${firstStateParameter}::json FROM created c WHERE ${firstStateParameter} IS NOT NULL)
    SELECT id FROM created`;
  // The rows of each queued range `q`, read through the primary key one range at a time. As a plain join the
  // planner may hash the few ranges and scan every message of every session instead (measured: a batch of 5
  // ranges read 10,600 rows of 26,000 in 2.6 ms, growing with the table); OFFSET 0 keeps the subquery a
  // parameterised index scan per range.
  const queuedRows = `LATERAL (SELECT m.session_id, m.seq, m.body FROM ${quoted("messages")} m
      WHERE m.session_id = q.session_id AND m.seq BETWEEN q.from_seq AND q.to_seq OFFSET 0) m`;
  // Takes queued ranges off the queue (skipping those another drain holds) with their rows' bodies; a range
  // whose rows are gone (its session deleted) comes back once with a null seq.
  const takeQueued = `WITH taken AS (DELETE FROM ${quoted("message_words_queue")} WHERE id IN (
      SELECT id FROM ${quoted("message_words_queue")} ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING id, session_id, from_seq, to_seq)
    SELECT q.id, m.session_id, m.seq, m.body::text AS body FROM taken q LEFT JOIN ${queuedRows} ON true`;
  // A message deleted meanwhile fails the foreign key: the drain rolls back and its ranges wait for the next.
  // Each row's foreign key takes a share lock on its message, in the order the rows go in: by session id (as
  // `sessions.id` sorts, COLLATE "C") and seq, the order deletes take their locks in (`lockMessages`, a cleanup's
  // sessions by id), or the two can deadlock on a session whose rows are not stored in seq order.
  const insertWords = `INSERT INTO ${quoted("message_words")} (session_id, seq, words)
    SELECT s, q, array_to_tsvector(string_to_array(w, ' ')) FROM unnest($1::text[], $2::int[], $3::text[]) AS t (s, q, w)
    ORDER BY s COLLATE "C", q
    ON CONFLICT DO NOTHING`;
  // Locks a session's rows by seq before they are deleted (see insertWords); counts them to return one row.
  const lockMessages = `SELECT count(*) FROM (SELECT 1 FROM ${quoted("messages")} WHERE session_id = $1
    ORDER BY seq FOR UPDATE) AS locked`;
  const readQueued = `SELECT m.session_id, m.seq, m.body::text AS body FROM ${quoted("message_words_queue")} q
    CROSS JOIN ${queuedRows}`;
  return {
    name: "postgres",
    schema,
    table,
    jsonText: (column) => sql<string>`${sql.ref(column)}::text`,
    sessionMetadata: sql<string>`s.metadata_json::text`,
    sessionExtras: (metadata) => ({ metadata_json: metadata }),
    executorsJson: sql<
      string | null
    >`(SELECT json_object_agg(x.agent, x.executor_session_id ORDER BY x.agent)::text
      FROM ${table("sync_states")} x WHERE x.session_id = s.id AND x.executor_session_id IS NOT NULL)`,
    flag: (value) => value,
    bytes: (value) => Buffer.from(value.buffer, value.byteOffset, value.byteLength),
    bytewise: (column) => sql<string>`${sql.ref(column)} COLLATE "C"`,
    contains: (haystack, needle) => sql<SqlBool>`(strpos(${haystack}, ${needle}) > 0)`,
    metadataConditions: (metadata) =>
      Object.keys(metadata).length === 0
        ? []
        : [sql<SqlBool>`s.metadata @> ${JSON.stringify(metadata)}::jsonb`],

    async insertMessages(database, queries, rows, totals) {
      const together = totals !== undefined && rows.length > 0 && rows.length <= ROWS_PER_STATEMENT;
      for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
        const chunk = rows.slice(start, start + ROWS_PER_STATEMENT).map(messageColumns);
        remember(database, chunk, rows.slice(start));
        const parameters = rowParameters(chunk);
        if (!together) {
          await queries.run(CompiledQuery.raw(insertMessages, parameters));
          continue;
        }
        const values = sessionTotals(totals);
        await queries.run(
          CompiledQuery.raw(insertMessagesAndTotals, [
            ...parameters,
            ...TOTALS_COLUMNS.map((name) => values[name]),
            values.id,
          ]),
        );
      }
      if (totals !== undefined && !together) await updateSessionTotals(database, queries, totals);
    },
    async appendKnown(database, queries, expected, next, rows, governorState) {
      const chunk = rows.map(messageColumns);
      remember(database, chunk, rows);
      const values = sessionTotals(next);
      const known = sessionTotals(expected);
      return queries.first<SessionRow>(
        CompiledQuery.raw(appendKnown, [
          ...rowParameters(chunk),
          ...TOTALS_COLUMNS.map((name) => values[name]),
          values.id,
          ...TOTALS_COLUMNS.map((name) => known[name]),
          expected.owner ?? null,
          governorState === undefined ? null : JSON.stringify(governorState),
        ]),
      );
    },
    async appendFirst(database, queries, session, rows, governorState) {
      const chunk = rows.map(messageColumns);
      remember(database, chunk, rows);
      const values = sessionValues(session);
      const created = await queries.first<{ id: string }>(
        CompiledQuery.raw(appendFirst, [
          ...rowParameters(chunk),
          ...SESSION_COLUMNS.map(([column]) => values[column]),
          governorState === undefined ? null : JSON.stringify(governorState),
        ]),
      );
      return created !== undefined;
    },
    async indexWaitingWords(database, queries, limit) {
      // A queued range is one write's rows (a turn: about four).
      const ranges = Math.max(1, Math.ceil(limit / 4));
      const rows = await queries.all<{
        id: string;
        session_id: string | null;
        seq: number | null;
        body: string | null;
      }>(CompiledQuery.raw(takeQueued, [ranges]));
      if (rows.length === 0) return 0;
      const indexed = rows.flatMap((row) => {
        if (row.session_id === null || row.seq === null || row.body === null) return [];
        const words = queuedWords(database.recentBodies, {
          session_id: row.session_id,
          seq: row.seq,
          body: row.body,
        });
        return words === "" ? [] : [{ sessionId: row.session_id, seq: row.seq, words }];
      });
      if (indexed.length > 0) {
        await queries.run(
          CompiledQuery.raw(insertWords, [
            indexed.map((row) => row.sessionId),
            indexed.map((row) => row.seq),
            indexed.map((row) => row.words),
          ]),
        );
      }
      return new Set(rows.map((row) => row.id)).size;
    },
    // The words go with their message rows (foreign key, on delete cascade); the rows are locked in seq order
    // first, the order the drain's inserts lock them in.
    async beforeDeletingMessages(_database, queries, sessionId) {
      await queries.run(CompiledQuery.raw(lockMessages, [sessionId]));
    },
    deleteRowWords: async () => {},
    async messageHits(_database, queries, terms) {
      const pending = matchingRows(await queries.all<QueuedRow>(CompiledQuery.raw(readQueued, [])), terms);
      return sql<{ session_id: string; seq: number }>`SELECT session_id, min(seq) AS seq FROM (
          SELECT w.session_id, w.seq FROM ${table("message_words")} w WHERE w.words @@ ${tsQuery(terms, " & ")}::tsquery
          UNION ALL
          SELECT * FROM unnest(${pending.map((row) => row.session_id)}::text[], ${pending.map((row) => row.seq)}::int[])
        ) AS found (session_id, seq) GROUP BY session_id`;
    },

    async insertMemory(database, queries, row) {
      await queries.run(insertMemoryRow.bind(database, row));
    },
    async replaceMemory(database, queries, row) {
      await queries.run(updateMemoryRow.bind(database, row));
    },
    // The words live in the memory rows.
    deleteMemoryWords: async () => {},
    memoryMatches: (terms) => {
      const query = tsQuery(terms, " | ");
      return {
        from: sql`${table("memories")} m`,
        where: sql<SqlBool>`m.words @@ ${query}::tsquery`,
        rank: sql`ts_rank(m.words, ${query}::tsquery) DESC`,
      };
    },

    async lock(queries, key) {
      await queries.run(sql`SELECT pg_advisory_xact_lock(${ADVISORY_LOCK_SPACE}, hashtext(${key}))`);
    },
    isUniqueViolation: (error) => sqlState(error) === "23505",
  };
}
