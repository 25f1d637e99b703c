/**
 * PostgreSQL's side of `StoreDialect`: JSON columns are `json` (which keeps key order, so exports stay
 * byte-identical) read back as text, flags are booleans, and message and memory words are a GIN-indexed
 * `tsvector` built from ctxkit's own normalised words (`array_to_tsvector`) and queried with quoted lexemes, so
 * no text-search configuration changes them. Tables in `sql` templates are qualified with the store's schema.
 */
import { CompiledQuery, sql, type SqlBool } from "kysely";
import { preparedQuery } from "../sql/prepared-query.ts";
import { messageValues, sessionTotals, TOTALS_COLUMNS, updateSessionTotals } from "../sql/session-rows.ts";
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
  // Message rows go in by the thousand, one statement per chunk, their columns as arrays.
  const messagesTable = `"${schema.replaceAll('"', '""')}"."messages"`;
  const insertMessages = `INSERT INTO ${messagesTable} (session_id, seq, position, turn, id, role, kind, tokens,
      summarized_by, created_at, body, words)
    SELECT session_id, seq, position, turn, id, role, kind, tokens, summarized_by, created_at, body,
      array_to_tsvector(string_to_array(words, ' '))
    FROM unnest($1::text[], $2::int[], $3::int[], $4::int[], $5::text[], $6::text[], $7::text[], $8::int[], $9::int[],
      $10::text[], $11::json[], $12::text[])
      AS t (session_id, seq, position, turn, id, role, kind, tokens, summarized_by, created_at, body, words)`;
  // One turn's rows and its session's new totals in one statement: one round trip fewer per turn.
  const insertMessagesAndTotals = `WITH inserted AS (${insertMessages})
    UPDATE "${schema.replaceAll('"', '""')}"."sessions"
    SET ${TOTALS_COLUMNS.map((column, index) => `${column} = $${13 + index}`).join(", ")}
    WHERE id = $${13 + TOTALS_COLUMNS.length}`;
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
        const chunk = rows.slice(start, start + ROWS_PER_STATEMENT).map(messageValues);
        const column = <T>(pick: (values: (typeof chunk)[number]) => T) => chunk.map(pick);
        const columns = [
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
          column((row) => row.words),
        ];
        if (!together) {
          await queries.run(CompiledQuery.raw(insertMessages, columns));
          continue;
        }
        const values = sessionTotals(totals);
        await queries.run(
          CompiledQuery.raw(insertMessagesAndTotals, [
            ...columns,
            ...TOTALS_COLUMNS.map((column) => values[column]),
            values.id,
          ]),
        );
      }
      if (totals !== undefined && !together) await updateSessionTotals(database, queries, totals);
    },
    // The words live in the message rows.
    deleteMessageWords: async () => {},
    messageHits: async (_database, _queries, terms) =>
      sql<{
        session_id: string;
        seq: number;
      }>`SELECT m.session_id, min(m.seq) AS seq FROM ${table("messages")} m
        WHERE m.words @@ ${tsQuery(terms, " & ")}::tsquery GROUP BY m.session_id`,

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
