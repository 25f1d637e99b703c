import type { SqliteDatabase } from "../../store/sqlite/sqlite-database.ts";
import type { MemoryStoreContext } from "../memory-plan.ts";
import { SqlMemoryStore } from "../sql/sql-memory-store.ts";

/**
 * Long-term memory in a ctxkit SQLite file (the same file the session store uses works), with an FTS5 index
 * for search. Create it with `openSqliteMemoryStore`.
 *
 * @example
 * const memories = await openSqliteMemoryStore({ path: "~/.ctxkit/ctxkit.db" });
 * await memories.add({ kind: "fact", content: "Staging runs on port 5433", sourceSessionId: "s1" });
 * const hits = await memories.search("staging port");
 */
export class SqliteMemoryStore extends SqlMemoryStore {
  readonly #database: SqliteDatabase;

  /** @internal Use `openSqliteMemoryStore`. */
  constructor(database: SqliteDatabase, context: MemoryStoreContext) {
    super(database, context);
    this.#database = database;
  }

  /** Absolute path of the database file (or `:memory:`). */
  get location(): string {
    return this.#database.location;
  }
}
