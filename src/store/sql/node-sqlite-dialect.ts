/**
 * Kysely over `node:sqlite` (no native addon). Kysely's `SqliteDialect` drives a better-sqlite3-like database
 * (`prepare(sql)` → a statement with `reader`, `all(params)`, `run(params)`, `iterate(params)`); this adapter
 * gives a `DatabaseSync` that shape, with each statement prepared once per connection.
 */
import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite";
import {
  SqliteDialect,
  type SqliteDatabase as KyselySqliteDatabase,
  type SqliteStatement as KyselySqliteStatement,
} from "kysely";

const READS_ROWS = /^\s*(select|with|values|pragma)\b|\breturning\b/i;

/** A cached `node:sqlite` statement in the shape Kysely's SQLite driver calls, and its rows as arrays. */
export class NodeSqliteStatement implements KyselySqliteStatement {
  readonly #statement: StatementSync;
  readonly #connection: DatabaseSync;
  readonly #sql: string;
  /** The same statement prepared to return arrays once asked for; null where Node cannot (before 22.16). */
  #arrays: StatementSync | null | undefined;
  readonly reader: boolean;

  constructor(connection: DatabaseSync, sql: string) {
    const statement = connection.prepare(sql);
    this.#statement = statement;
    this.#connection = connection;
    this.#sql = sql;
    // A statement that yields columns (a SELECT, a PRAGMA that answers, anything with RETURNING) is read.
    // `columns()` came with Node 22.16; before it, the SQL text tells.
    this.reader =
      typeof statement.columns === "function" ? statement.columns().length > 0 : READS_ROWS.test(sql);
  }

  all(parameters: readonly unknown[]): unknown[] {
    return this.#statement.all(...(parameters as SQLInputValue[]));
  }

  /** The rows as arrays of column values, in select order (no object per row where Node can do that). */
  tuples(parameters: readonly unknown[]): unknown[][] {
    if (this.#arrays === undefined) {
      this.#arrays =
        typeof this.#statement.setReturnArrays === "function" ? this.#connection.prepare(this.#sql) : null;
      this.#arrays?.setReturnArrays(true);
    }
    if (this.#arrays === null) return this.all(parameters).map((row) => Object.values(row as object));
    return this.#arrays.all(...(parameters as SQLInputValue[])) as unknown as unknown[][];
  }

  run(parameters: readonly unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint } {
    return this.#statement.run(...(parameters as SQLInputValue[]));
  }

  iterate(parameters: readonly unknown[]): IterableIterator<unknown> {
    return this.#statement.iterate(...(parameters as SQLInputValue[]));
  }
}

/** A `DatabaseSync` as Kysely's SQLite driver wants it, its statements able to return arrays. */
export interface NodeSqliteDatabase extends KyselySqliteDatabase {
  prepare(sql: string): NodeSqliteStatement;
}

/**
 * A `DatabaseSync` as Kysely's SQLite driver wants it. Statements are cached by SQL text, so a query Kysely
 * compiles to the same text is prepared once; `close()` closes the connection.
 *
 * @example
 * const database = nodeSqliteDatabase(new DatabaseSync(":memory:"));
 * database.prepare("SELECT 1 AS one").all([]); // [{ one: 1 }]
 */
export function nodeSqliteDatabase(connection: DatabaseSync): NodeSqliteDatabase {
  const statements = new Map<string, NodeSqliteStatement>();
  let closed = false;
  return {
    prepare(sql: string): NodeSqliteStatement {
      let statement = statements.get(sql);
      if (statement === undefined) {
        statement = new NodeSqliteStatement(connection, sql);
        statements.set(sql, statement);
      }
      return statement;
    },
    close(): void {
      statements.clear();
      if (closed) return;
      closed = true;
      connection.close();
    },
  };
}

/**
 * Kysely's SQLite dialect on a `node:sqlite` connection. Kysely serialises the use of the one connection (its
 * SQLite adapter has no second connection), so a callback given to `db.connection().execute()` owns it.
 *
 * @example
 * const db = new Kysely<Tables>({ dialect: nodeSqliteDialect(new DatabaseSync(path)) });
 */
export function nodeSqliteDialect(connection: DatabaseSync): SqliteDialect {
  return new SqliteDialect({ database: nodeSqliteDatabase(connection) });
}
