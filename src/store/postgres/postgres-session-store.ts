import { SqlSessionStore } from "../sql/sql-session-store.ts";
import type { StoreContext } from "../store-context.ts";
import type { PostgresDatabase } from "./postgres-database.ts";

/**
 * The session store for many agent servers sharing one PostgreSQL database (`pg` pool). Writers of one
 * session are serialised by a per-session advisory lock; readers use MVCC snapshots and never block them.
 * Create it with `openPostgresSessionStore`.
 */
export class PostgresSessionStore extends SqlSessionStore {
  readonly #database: PostgresDatabase;

  /** @internal Use `openPostgresSessionStore`. */
  constructor(database: PostgresDatabase, context: StoreContext) {
    super(database, context);
    this.#database = database;
  }

  /** @internal The pool wrapper, for tests and tools. */
  get database(): PostgresDatabase {
    return this.#database;
  }
}
