import type { PostgresDatabase } from "../../store/postgres/postgres-database.ts";
import type { MemoryStoreContext } from "../memory-plan.ts";
import { SqlMemoryStore } from "../sql/sql-memory-store.ts";

/**
 * Long-term memory in PostgreSQL for many agent servers sharing one database (the session store's schema
 * works), searched through a GIN-indexed `tsvector`. Changes of one owner are serialised by an advisory lock so
 * two servers cannot both store the same memory. Create it with `openPostgresMemoryStore`.
 *
 * @example
 * const memories = await openPostgresMemoryStore({ connectionString: process.env.CTXKIT_PG_URL, schema: "agents" });
 * await memories.add({ owner: tenantId, kind: "preference", content: "Answer in French" });
 * const version = await memories.version({ owner: tenantId });
 */
export class PostgresMemoryStore extends SqlMemoryStore {
  readonly #database: PostgresDatabase;

  /** @internal Use `openPostgresMemoryStore`. */
  constructor(database: PostgresDatabase, context: MemoryStoreContext) {
    super(database, context);
    this.#database = database;
  }

  /** @internal The database, for tests and tools. */
  get database(): PostgresDatabase {
    return this.#database;
  }
}
