/**
 * SQLite's side of `StoreDialect`: JSON is stored as text, flags as 0/1, and message and memory words are
 * indexed by contentless FTS5 tables (`message_words`, `memory_words`, the `ascii` tokenizer over ctxkit's own
 * normalised words) keyed by the rows' `row_id`; message words after their turns, in batches
 * (sqlite-message-words.ts).
 */
import { sql, type RawBuilder, type SqlBool } from "kysely";
import { preparedQuery } from "../sql/prepared-query.ts";
import { messageColumns, updateSessionTotals, type MessageColumns } from "../sql/session-rows.ts";
import type { MemoryRowValues, MetadataFilter, StoreDialect } from "../sql/store-dialect.ts";
import { isUniqueViolation } from "./sqlite-errors.ts";
import {
  deleteRowWords,
  deleteSessionWords,
  indexWaitingWords,
  pendingMatches,
} from "./sqlite-message-words.ts";

const insertMessage = preparedQuery<MessageColumns, never>(({ builder }, p) =>
  builder.insertInto("messages").values({
    session_id: p("session_id"),
    seq: p("seq"),
    position: p("position"),
    turn: p("turn"),
    id: p("id"),
    role: p("role"),
    kind: p("kind"),
    tokens: p("tokens"),
    summarized_by: p("summarized_by"),
    created_at: p("created_at"),
    body: p("body"),
  }),
);

const insertMemoryRow = preparedQuery<MemoryRowValues, { row_id: number }>(({ builder }, p) =>
  builder
    .insertInto("memories")
    .values({
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
    })
    .returning("row_id"),
);

const updateMemoryRow = preparedQuery<MemoryRowValues, { row_id: number }>(({ builder }, p) =>
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
    })
    .where("id", "=", p("id"))
    .returning("row_id"),
);

const insertMemoryWords = preparedQuery<{ rowid: number; words: string }, never>(({ builder }, p) =>
  builder.insertInto("memory_words").values({ rowid: p("rowid"), words: p("words") }),
);

const deleteMemoryWordsOf = preparedQuery<{ rowid: number }, never>(({ builder }, p) =>
  builder.deleteFrom("memory_words").where("rowid", "=", p("rowid")),
);

/** An FTS5 query of quoted terms (ctxkit's normalised words need no further escaping). */
const ftsQuery = (terms: readonly string[], operator: " " | " OR ") =>
  terms.map((term) => `"${term}"`).join(operator);

function metadataCondition(key: string, value: MetadataFilter[string]): RawBuilder<SqlBool> {
  const exists = (condition: RawBuilder<unknown>) =>
    sql<SqlBool>`EXISTS (SELECT 1 FROM json_each(s.metadata) j WHERE j.key = ${key} AND ${condition})`;
  if (value === null) return exists(sql`j.type = 'null'`);
  if (typeof value === "boolean") return exists(value ? sql`j.type = 'true'` : sql`j.type = 'false'`);
  if (typeof value === "number") return exists(sql`j.type IN ('integer', 'real') AND j.value = ${value}`);
  return exists(sql`j.type = 'text' AND j.value = ${value}`);
}

/** The SQLite dialect of the store. */
export const sqliteStoreDialect: StoreDialect = {
  name: "sqlite",
  table: (name) => sql.table(name),
  jsonText: (column) => sql.ref<string>(column),
  sessionMetadata: sql.ref<string>("s.metadata"),
  sessionExtras: () => ({}),
  executorsJson: sql<string | null>`(SELECT json_group_object(x.agent, x.executor_session_id)
    FROM sync_states x WHERE x.session_id = s.id AND x.executor_session_id IS NOT NULL)`,
  flag: (value) => (value ? 1 : 0),
  bytes: (value) => value,
  bytewise: (column) => sql.ref<string>(column),
  contains: (haystack, needle) => sql<SqlBool>`(instr(${haystack}, ${needle}) > 0)`,
  metadataConditions: (metadata) =>
    Object.entries(metadata).map(([key, value]) => metadataCondition(key, value)),

  // The rows wait for their words past the mark (sqlite-message-words.ts): the drain indexes them later.
  async insertMessages(database, queries, rows, totals) {
    for (const row of rows) {
      const columns = messageColumns(row);
      await queries.run(insertMessage.bind(database, columns));
      database.recentBodies?.remember(columns.session_id, columns.seq, columns.body, row.message);
    }
    if (totals) await updateSessionTotals(database, queries, totals);
  },
  indexWaitingWords: (database, queries, limit) => indexWaitingWords(queries, limit, database.recentBodies),
  async beforeDeletingMessages(_database, queries, sessionId) {
    await deleteSessionWords(queries, sessionId);
  },
  async deleteRowWords(_database, queries, sessionId, seq) {
    await deleteRowWords(queries, sessionId, seq);
  },
  async messageHits(_database, queries, terms) {
    const pending = await pendingMatches(queries, terms);
    return sql<{ session_id: string; seq: number }>`SELECT session_id, min(seq) AS seq FROM (
        SELECT m.session_id, m.seq FROM message_words w JOIN messages m ON m.row_id = w.rowid
        WHERE message_words MATCH ${ftsQuery(terms, " ")}
        UNION ALL
        SELECT m.session_id, m.seq FROM messages m WHERE m.row_id IN (SELECT value FROM json_each(${pending}))
      ) GROUP BY session_id`;
  },

  async insertMemory(database, queries, row) {
    const inserted = await queries.first<{ row_id: number }>(insertMemoryRow.bind(database, row));
    await queries.run(insertMemoryWords.bind(database, { rowid: inserted!.row_id, words: row.normalized }));
  },
  async replaceMemory(database, queries, row) {
    const updated = await queries.first<{ row_id: number }>(updateMemoryRow.bind(database, row));
    if (updated === undefined) return;
    await queries.run(deleteMemoryWordsOf.bind(database, { rowid: updated.row_id }));
    await queries.run(insertMemoryWords.bind(database, { rowid: updated.row_id, words: row.normalized }));
  },
  async deleteMemoryWords(_database, queries, condition) {
    await queries.run(
      sql`DELETE FROM memory_words WHERE rowid IN (SELECT m.row_id FROM memories m WHERE ${condition})`,
    );
  },
  memoryMatches: (terms) => ({
    from: sql`memory_words w JOIN memories m ON m.row_id = w.rowid`,
    where: sql<SqlBool>`memory_words MATCH ${ftsQuery(terms, " OR ")}`,
    rank: sql`bm25(memory_words)`,
  }),

  lock: async () => {},
  isUniqueViolation,
};
