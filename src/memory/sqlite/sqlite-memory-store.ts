import { NotFoundError, ValidationError } from "../../errors/index.ts";
import { searchTerms } from "../../store/search-text.ts";
import { isUniqueViolation, type SqliteDatabase } from "../../store/sqlite/sqlite-database.ts";
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
  bumpVersion,
  deleteMemoryRows,
  insertMemory,
  MEMORY_COLUMNS,
  memoryFromRow,
  replaceMemory,
  type MemoryRow,
} from "./sqlite-memory-rows.ts";

/** Most near-duplicate candidates compared per add (newest first). */
const MAX_DUPLICATE_CANDIDATES = 500;

/**
 * Long-term memory in a ctxkit SQLite file (the same file the session store uses works), with an FTS5 index
 * for search. Create it with `openSqliteMemoryStore`.
 *
 * @example
 * const memories = await openSqliteMemoryStore({ path: "~/.ctxkit/ctxkit.db" });
 * await memories.add({ kind: "fact", content: "Staging runs on port 5433", sourceSessionId: "s1" });
 * const hits = await memories.search("staging port");
 */
export class SqliteMemoryStore implements MemoryStore {
  readonly #database: SqliteDatabase;
  readonly #context: MemoryStoreContext;

  /** @internal Use `openSqliteMemoryStore`. */
  constructor(database: SqliteDatabase, context: MemoryStoreContext) {
    this.#database = database;
    this.#context = context;
  }

  /** Absolute path of the database file (or `:memory:`). */
  get location(): string {
    return this.#database.location;
  }

  #now(): string {
    return this.#context.clock().toISOString();
  }

  #memory(row: MemoryRow): Memory {
    return memoryFromRow(row, this.#database.location);
  }

  /** The owner's unexpired row with this id. */
  #activeRow(id: string, owner: string, now: string): MemoryRow | undefined {
    return this.#database.get<MemoryRow>(
      `SELECT ${MEMORY_COLUMNS} FROM memories m
       WHERE m.id = ? AND m.owner = ? AND (m.expires_at IS NULL OR m.expires_at > ?)`,
      id,
      owner,
      now,
    );
  }

  async add(input: MemoryInput): Promise<AddMemoryResult> {
    const parsed = parseMemoryInput(input);
    const now = this.#now();
    const { shingleCount } = indexedText(parsed.content);
    const range = shingleCountRange(shingleCount);
    return this.#database.write(() => {
      const rows = this.#database.all<MemoryRow>(
        `SELECT ${MEMORY_COLUMNS} FROM memories m
         WHERE m.owner = ? AND m.scope = ? AND m.kind = ? AND m.shingle_count BETWEEN ? AND ?
           AND (m.expires_at IS NULL OR m.expires_at > ?)
         ORDER BY ${newestFirstOrder("sqlite")} LIMIT ${MAX_DUPLICATE_CANDIDATES}`,
        parsed.owner,
        parsed.scope,
        parsed.kind,
        range.min,
        range.max,
        now,
      );
      const duplicate = findDuplicate(
        rows.map((row) => this.#memory(row)),
        parsed,
      );
      bumpVersion(this.#database, parsed.owner);
      if (duplicate) {
        const merged = mergeDuplicate(duplicate, parsed, now);
        replaceMemory(this.#database, rows.find((row) => row.id === duplicate.id)!.row_id, merged);
        return { memory: merged, deduplicated: true };
      }
      const memory = newMemory(parsed, parsed.id ?? this.#context.ids("mem"), now);
      try {
        insertMemory(this.#database, memory);
      } catch (error) {
        if (isUniqueViolation(error)) {
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
    const owner = parseOwner(options);
    const row = this.#database.read(() => this.#activeRow(id, owner, this.#now()));
    return row ? this.#memory(row) : undefined;
  }

  async update(id: string, changes: MemoryChanges, options?: OwnerOption): Promise<Memory> {
    const owner = parseOwner(options);
    const parsed = parseMemoryChanges(changes);
    const now = this.#now();
    return this.#database.write(() => {
      const row = this.#activeRow(id, owner, now);
      if (!row)
        throw new NotFoundError(
          "memory",
          id,
          `owner "${owner}" has no such memory; list them to see the ids`,
        );
      const updated = applyChanges(this.#memory(row), parsed, now);
      replaceMemory(this.#database, row.row_id, updated);
      bumpVersion(this.#database, owner);
      return updated;
    });
  }

  async delete(id: string, options?: OwnerOption): Promise<boolean> {
    const owner = parseOwner(options);
    return this.#database.write(() => {
      const row = this.#database.get<{ row_id: number }>(
        "SELECT row_id FROM memories WHERE id = ? AND owner = ?",
        id,
        owner,
      );
      if (!row) return false;
      deleteMemoryRows(this.#database, [row.row_id]);
      bumpVersion(this.#database, owner);
      return true;
    });
  }

  async search(query: string, options?: MemoryFilter): Promise<MemorySearchHit[]> {
    const terms = searchTerms(query);
    const filter = parseMemoryFilter(options, DEFAULT_SEARCH_LIMIT);
    const { bind, values } = parameters("sqlite");
    const matched = matchedTermsExpression(terms, "sqlite", bind);
    const match = bind(terms.map((term) => `"${term}"`).join(" OR "));
    const where = filterConditions(filter, this.#now(), "sqlite", bind);
    const sql = `SELECT ${MEMORY_COLUMNS}, ${matched} AS matched
       FROM memory_words w JOIN memories m ON m.row_id = w.rowid
       WHERE memory_words MATCH ${match} AND ${where}
       ORDER BY matched DESC, bm25(memory_words), ${newestFirstOrder("sqlite")}
       LIMIT ${bind(filter.limit)}`;
    const rows = this.#database.read(() =>
      this.#database.all<MemoryRow & { matched: number }>(sql, ...values),
    );
    return rows.map((row) => ({
      memory: this.#memory(row),
      matchedTerms: row.matched,
      snippet: memorySnippet(row.content, terms),
    }));
  }

  async list(options?: MemoryFilter): Promise<Memory[]> {
    const filter = parseMemoryFilter(options, DEFAULT_LIST_LIMIT);
    const { bind, values } = parameters("sqlite");
    const where = filterConditions(filter, this.#now(), "sqlite", bind);
    const sql = `SELECT ${MEMORY_COLUMNS} FROM memories m WHERE ${where}
       ORDER BY ${newestFirstOrder("sqlite")} LIMIT ${bind(filter.limit)}`;
    return this.#database
      .read(() => this.#database.all<MemoryRow>(sql, ...values))
      .map((row) => this.#memory(row));
  }

  async purgeExpired(): Promise<number> {
    const now = this.#now();
    return this.#database.write(() => {
      const rows = this.#database.all<{ row_id: number; owner: string }>(
        "SELECT row_id, owner FROM memories WHERE expires_at IS NOT NULL AND expires_at <= ?",
        now,
      );
      deleteMemoryRows(
        this.#database,
        rows.map((row) => row.row_id),
      );
      for (const owner of new Set(rows.map((row) => row.owner))) bumpVersion(this.#database, owner);
      return rows.length;
    });
  }

  async version(options?: OwnerOption): Promise<number> {
    const owner = parseOwner(options);
    const row = this.#database.read(() =>
      this.#database.get<{ version: number }>("SELECT version FROM memory_versions WHERE owner = ?", owner),
    );
    return row?.version ?? 0;
  }

  async close(): Promise<void> {
    this.#database.close();
  }
}
