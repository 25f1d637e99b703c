import { sql, type SqlBool } from "kysely";
import { NotFoundError, ValidationError } from "../../errors/index.ts";
import { searchTerms } from "../../store/search-text.ts";
import type { SqlDatabase, SqlQueries } from "../../store/sql/sql-database.ts";
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
  activeAt,
  allOf,
  filterConditions,
  matchedTerms,
  memoryColumns,
  memoryFromRow,
  memoryRowValues,
  newestFirstOrder,
  type MemoryRow,
} from "./memory-rows.ts";

/** Most near-duplicate candidates compared per add (newest first). */
const MAX_DUPLICATE_CANDIDATES = 500;

/**
 * Long-term memory in a ctxkit SQL database (beside the session tables), one implementation for SQLite (an
 * FTS5 index) and PostgreSQL (a GIN-indexed `tsvector`). Changes of one owner are serialised (PostgreSQL: an
 * advisory lock), so two servers cannot both store the same memory. `SqliteMemoryStore` and
 * `PostgresMemoryStore` are this store on their database.
 */
export class SqlMemoryStore implements MemoryStore {
  readonly #database: SqlDatabase;
  readonly #context: MemoryStoreContext;

  /** @internal Use `openSqliteMemoryStore` or `openPostgresMemoryStore`. */
  constructor(database: SqlDatabase, context: MemoryStoreContext) {
    this.#database = database;
    this.#context = context;
  }

  #now(): string {
    return this.#context.clock().toISOString();
  }

  #memory(row: MemoryRow): Memory {
    return memoryFromRow(row, this.#database.location);
  }

  /** Serialises the changes of one owner's memories until the transaction ends. */
  #lockOwner(queries: SqlQueries, owner: string): Promise<void> {
    return this.#database.dialect.lock(queries, `memory-owner:${owner}`);
  }

  /** Adds one to each owner's version. */
  async #bumpVersions(queries: SqlQueries, owners: Iterable<string>): Promise<void> {
    for (const owner of owners) {
      await queries.run(
        this.#database.builder
          .insertInto("memory_versions")
          .values({ owner, version: 1 })
          .onConflict((conflict) =>
            conflict.column("owner").doUpdateSet({ version: sql`${sql.ref("memory_versions.version")} + 1` }),
          ),
      );
    }
  }

  async add(input: MemoryInput): Promise<AddMemoryResult> {
    const parsed = parseMemoryInput(input);
    const now = this.#now();
    const range = shingleCountRange(indexedText(parsed.content).shingleCount);
    const database = this.#database;
    const { dialect } = database;
    return database.write(async (queries) => {
      await this.#lockOwner(queries, parsed.owner);
      const rows = await queries.all<MemoryRow>(
        sql`SELECT ${memoryColumns(database)} FROM ${dialect.table("memories")} m
          WHERE m.owner = ${parsed.owner} AND m.scope = ${parsed.scope} AND m.kind = ${parsed.kind}
            AND m.shingle_count BETWEEN ${range.min} AND ${range.max} AND ${activeAt(now)}
          ORDER BY ${newestFirstOrder(database)} LIMIT ${MAX_DUPLICATE_CANDIDATES}`,
      );
      const duplicate = findDuplicate(
        rows.map((row) => this.#memory(row)),
        parsed,
      );
      await this.#bumpVersions(queries, [parsed.owner]);
      if (duplicate) {
        const merged = mergeDuplicate(duplicate, parsed, now);
        await dialect.replaceMemory(database, queries, memoryRowValues(merged));
        return { memory: merged, deduplicated: true };
      }
      const memory = newMemory(parsed, parsed.id ?? this.#context.ids("mem"), now);
      try {
        await dialect.insertMemory(database, queries, memoryRowValues(memory));
      } catch (error) {
        if (dialect.isUniqueViolation(error)) {
          throw new ValidationError(`memory id "${memory.id}" is already taken; pass another id`, [], {
            cause: error,
          });
        }
        throw error;
      }
      return { memory, deduplicated: false };
    });
  }

  /** The owner's unexpired memory with this id. */
  async #active(queries: SqlQueries, id: string, owner: string, now: string): Promise<MemoryRow | undefined> {
    const database = this.#database;
    return queries.first<MemoryRow>(
      sql`SELECT ${memoryColumns(database)} FROM ${database.dialect.table("memories")} m
        WHERE m.id = ${id} AND m.owner = ${owner} AND ${activeAt(now)}`,
    );
  }

  async get(id: string, options?: OwnerOption): Promise<Memory | undefined> {
    const row = await this.#active(this.#database.queries, id, parseOwner(options), this.#now());
    return row ? this.#memory(row) : undefined;
  }

  async update(id: string, changes: MemoryChanges, options?: OwnerOption): Promise<Memory> {
    const owner = parseOwner(options);
    const parsed = parseMemoryChanges(changes);
    const now = this.#now();
    const database = this.#database;
    return database.write(async (queries) => {
      await this.#lockOwner(queries, owner);
      const row = await this.#active(queries, id, owner, now);
      if (!row) {
        throw new NotFoundError(
          "memory",
          id,
          `owner "${owner}" has no such memory; list them to see the ids`,
        );
      }
      const updated = applyChanges(this.#memory(row), parsed, now);
      await database.dialect.replaceMemory(database, queries, memoryRowValues(updated));
      await this.#bumpVersions(queries, [owner]);
      return updated;
    });
  }

  async delete(id: string, options?: OwnerOption): Promise<boolean> {
    const owner = parseOwner(options);
    const database = this.#database;
    return database.write(async (queries) => {
      await database.dialect.deleteMemoryWords(
        database,
        queries,
        sql<SqlBool>`m.id = ${id} AND m.owner = ${owner}`,
      );
      const deleted = await queries.run(
        database.builder.deleteFrom("memories").where("id", "=", id).where("owner", "=", owner),
      );
      if (deleted > 0) await this.#bumpVersions(queries, [owner]);
      return deleted > 0;
    });
  }

  async search(query: string, options?: MemoryFilter): Promise<MemorySearchHit[]> {
    const terms = searchTerms(query);
    const filter = parseMemoryFilter(options, DEFAULT_SEARCH_LIMIT);
    const database = this.#database;
    const match = database.dialect.memoryMatches(terms);
    const rows = await database.queries.all<MemoryRow & { matched: number }>(
      sql`SELECT ${memoryColumns(database)}, ${matchedTerms(database, terms)} AS matched FROM ${match.from}
        WHERE ${match.where} AND ${allOf(filterConditions(filter, this.#now()))}
        ORDER BY matched DESC, ${match.rank}, ${newestFirstOrder(database)} LIMIT ${filter.limit}`,
    );
    return rows.map((row) => ({
      memory: this.#memory(row),
      matchedTerms: Number(row.matched),
      snippet: memorySnippet(row.content, terms),
    }));
  }

  async list(options?: MemoryFilter): Promise<Memory[]> {
    const filter = parseMemoryFilter(options, DEFAULT_LIST_LIMIT);
    const database = this.#database;
    const rows = await database.queries.all<MemoryRow>(
      sql`SELECT ${memoryColumns(database)} FROM ${database.dialect.table("memories")} m
        WHERE ${allOf(filterConditions(filter, this.#now()))}
        ORDER BY ${newestFirstOrder(database)} LIMIT ${filter.limit}`,
    );
    return rows.map((row) => this.#memory(row));
  }

  async purgeExpired(): Promise<number> {
    const now = this.#now();
    const database = this.#database;
    return database.write(async (queries) => {
      const expired = sql<SqlBool>`m.expires_at IS NOT NULL AND m.expires_at <= ${now}`;
      await database.dialect.deleteMemoryWords(database, queries, expired);
      const deleted = await queries.all<{ owner: string }>(
        database.builder
          .deleteFrom("memories")
          .where("expires_at", "is not", null)
          .where("expires_at", "<=", now)
          .returning("owner"),
      );
      await this.#bumpVersions(queries, [...new Set(deleted.map((row) => row.owner))].sort());
      return deleted.length;
    });
  }

  async version(options?: OwnerOption): Promise<number> {
    const row = await this.#database.queries.first<{ version: number | string }>(
      this.#database.builder
        .selectFrom("memory_versions")
        .select("version")
        .where("owner", "=", parseOwner(options)),
    );
    return row === undefined ? 0 : Number(row.version);
  }

  async close(): Promise<void> {
    await this.#database.close();
  }
}
