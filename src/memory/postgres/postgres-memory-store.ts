import { NotFoundError, ValidationError } from "../../errors/index.ts";
import { searchTerms } from "../../store/search-text.ts";
import { sqlState, type PostgresDatabase } from "../../store/postgres/postgres-database.ts";
import { ADVISORY_LOCK_SPACE } from "../../store/postgres/postgres-schema.ts";
import {
  applyChanges,
  findDuplicate,
  indexedText,
  mergeDuplicate,
  newMemory,
  type MemoryStoreContext,
} from "../memory-plan.ts";
import {
  DEFAULT_LIST_LIMIT,
  DEFAULT_SEARCH_LIMIT,
  parseMemoryChanges,
  parseMemoryFilter,
  parseMemoryInput,
  parseOwner,
} from "../memory-schemas.ts";
import { filterConditions, matchedTermsExpression, newestFirstOrder, parameters } from "../memory-sql.ts";
import type {
  AddMemoryResult,
  Memory,
  MemoryChanges,
  MemoryFilter,
  MemoryInput,
  MemorySearchHit,
  MemoryStore,
  OwnerOption,
} from "../memory-store.ts";
import { memorySnippet, shingleCountRange } from "../memory-text.ts";
import {
  bumpVersions,
  insertMemory,
  MEMORY_COLUMNS,
  memoryFromRow,
  replaceMemory,
  type MemoryRow,
} from "./postgres-memory-rows.ts";

/** Most near-duplicate candidates compared per add (newest first). */
const MAX_DUPLICATE_CANDIDATES = 500;

const ACTIVE = "(m.expires_at IS NULL OR m.expires_at > $3)";

/**
 * Long-term memory in PostgreSQL for many agent servers sharing one database (the session store's schema
 * works), searched through a GIN-indexed `tsvector`. Adds of one owner are serialised by an advisory lock so
 * two servers cannot both store the same memory. Create it with `openPostgresMemoryStore`.
 *
 * @example
 * const memories = await openPostgresMemoryStore({ connectionString: process.env.CTXKIT_PG_URL, schema: "agents" });
 * await memories.add({ owner: tenantId, kind: "preference", content: "Answer in French" });
 * const version = await memories.version({ owner: tenantId });
 */
export class PostgresMemoryStore implements MemoryStore {
  readonly #database: PostgresDatabase;
  readonly #context: MemoryStoreContext;

  /** @internal Use `openPostgresMemoryStore`. */
  constructor(database: PostgresDatabase, context: MemoryStoreContext) {
    this.#database = database;
    this.#context = context;
  }

  /** @internal The database, for tests and tools. */
  get database(): PostgresDatabase {
    return this.#database;
  }

  #now(): string {
    return this.#context.clock().toISOString();
  }

  async add(input: MemoryInput): Promise<AddMemoryResult> {
    const parsed = parseMemoryInput(input);
    const now = this.#now();
    const range = shingleCountRange(indexedText(parsed.content).shingleCount);
    return this.#database.transaction(async (queries) => {
      await queries.run("SELECT pg_advisory_xact_lock($1, hashtext($2))", [
        ADVISORY_LOCK_SPACE,
        `memory-owner:${this.#database.schema}:${parsed.owner}`,
      ]);
      const rows = await queries.rows<MemoryRow>(
        `SELECT ${MEMORY_COLUMNS} FROM {memories} m
         WHERE m.owner = $1 AND ${ACTIVE} AND m.scope = $2 AND m.kind = $4 AND m.shingle_count BETWEEN $5 AND $6
         ORDER BY ${newestFirstOrder("postgres")} LIMIT ${MAX_DUPLICATE_CANDIDATES}`,
        [parsed.owner, parsed.scope, now, parsed.kind, range.min, range.max],
      );
      const duplicate = findDuplicate(rows.map(memoryFromRow), parsed);
      await bumpVersions(queries, [parsed.owner]);
      if (duplicate) {
        const merged = mergeDuplicate(duplicate, parsed, now);
        await replaceMemory(queries, merged);
        return { memory: merged, deduplicated: true };
      }
      const memory = newMemory(parsed, parsed.id ?? this.#context.ids("mem"), now);
      try {
        await insertMemory(queries, memory);
      } catch (error) {
        if (sqlState(error) === "23505") {
          throw new ValidationError(`memory id "${memory.id}" is already taken; pass another id`, [], {
            cause: error,
          });
        }
        throw error;
      }
      return { memory, deduplicated: false };
    });
  }

  async get(id: string, options?: OwnerOption): Promise<Memory | undefined> {
    const row = await this.#database.row<MemoryRow>(
      `SELECT ${MEMORY_COLUMNS} FROM {memories} m WHERE m.id = $1 AND m.owner = $2 AND ${ACTIVE}`,
      [id, parseOwner(options), this.#now()],
    );
    return row ? memoryFromRow(row) : undefined;
  }

  async update(id: string, changes: MemoryChanges, options?: OwnerOption): Promise<Memory> {
    const owner = parseOwner(options);
    const parsed = parseMemoryChanges(changes);
    const now = this.#now();
    return this.#database.transaction(async (queries) => {
      const row = await queries.row<MemoryRow>(
        `SELECT ${MEMORY_COLUMNS} FROM {memories} m WHERE m.id = $1 AND m.owner = $2 AND ${ACTIVE} FOR UPDATE`,
        [id, owner, now],
      );
      if (!row) {
        throw new NotFoundError(
          "memory",
          id,
          `owner "${owner}" has no such memory; list them to see the ids`,
        );
      }
      const updated = applyChanges(memoryFromRow(row), parsed, now);
      await replaceMemory(queries, updated);
      await bumpVersions(queries, [owner]);
      return updated;
    });
  }

  async delete(id: string, options?: OwnerOption): Promise<boolean> {
    const owner = parseOwner(options);
    return this.#database.transaction(async (queries) => {
      const deleted = await queries.run("DELETE FROM {memories} WHERE id = $1 AND owner = $2", [id, owner]);
      if (deleted > 0) await bumpVersions(queries, [owner]);
      return deleted > 0;
    });
  }

  async search(query: string, options?: MemoryFilter): Promise<MemorySearchHit[]> {
    const terms = searchTerms(query);
    const filter = parseMemoryFilter(options, DEFAULT_SEARCH_LIMIT);
    const { bind, values } = parameters("postgres");
    const matched = matchedTermsExpression(terms, "postgres", bind);
    const tsquery = `${bind(terms.map((term) => `'${term}'`).join(" | "))}::tsquery`;
    const where = filterConditions(filter, this.#now(), "postgres", bind);
    const rows = await this.#database.rows<MemoryRow & { matched: number }>(
      `SELECT ${MEMORY_COLUMNS}, ${matched} AS matched FROM {memories} m
       WHERE m.words @@ ${tsquery} AND ${where}
       ORDER BY matched DESC, ts_rank(m.words, ${tsquery}) DESC, ${newestFirstOrder("postgres")}
       LIMIT ${bind(filter.limit)}`,
      values,
    );
    return rows.map((row) => ({
      memory: memoryFromRow(row),
      matchedTerms: row.matched,
      snippet: memorySnippet(row.content, terms),
    }));
  }

  async list(options?: MemoryFilter): Promise<Memory[]> {
    const filter = parseMemoryFilter(options, DEFAULT_LIST_LIMIT);
    const { bind, values } = parameters("postgres");
    const where = filterConditions(filter, this.#now(), "postgres", bind);
    const rows = await this.#database.rows<MemoryRow>(
      `SELECT ${MEMORY_COLUMNS} FROM {memories} m WHERE ${where}
       ORDER BY ${newestFirstOrder("postgres")} LIMIT ${bind(filter.limit)}`,
      values,
    );
    return rows.map(memoryFromRow);
  }

  async purgeExpired(): Promise<number> {
    const now = this.#now();
    return this.#database.transaction(async (queries) => {
      const deleted = await queries.rows<{ owner: string }>(
        "DELETE FROM {memories} WHERE expires_at IS NOT NULL AND expires_at <= $1 RETURNING owner",
        [now],
      );
      await bumpVersions(queries, [...new Set(deleted.map((row) => row.owner))].sort());
      return deleted.length;
    });
  }

  async version(options?: OwnerOption): Promise<number> {
    const row = await this.#database.row<{ version: string }>(
      "SELECT version FROM {memory_versions} WHERE owner = $1",
      [parseOwner(options)],
    );
    return row === undefined ? 0 : Number(row.version);
  }

  async close(): Promise<void> {
    await this.#database.close();
  }
}
