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

/** A cached `node:sqlite` statement in the shape Kysely's SQLite driver calls. */
class NodeSqliteStatement implements KyselySqliteStatement {
  readonly #statement: StatementSync;
  readonly reader: boolean;

  constructor(statement: StatementSync, sql: string) {
    this.#statement = statement;
    // A statement that yields columns (a SELECT, a PRAGMA that answers, anything with RETURNING) is read.
    // `columns()` came with Node 22.16; before it, the SQL text tells.
    this.reader =
      typeof statement.columns === "function" ? statement.columns().length > 0 : READS_ROWS.test(sql);
  }

  all(parameters: readonly unknown[]): unknown[] {
    return this.#statement.all(...(parameters as SQLInputValue[]));
  }

  run(parameters: readonly unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint } {
    return this.#statement.run(...(parameters as SQLInputValue[]));
  }

  iterate(parameters: readonly unknown[]): IterableIterator<unknown> {
    return this.#statement.iterate(...(parameters as SQLInputValue[]));
  }
}

/**
 * A `DatabaseSync` as Kysely's SQLite driver wants it. Statements are cached by SQL text, so a query Kysely
 * compiles to the same text is prepared once; `close()` closes the connection.
 *
 * @example
 * const database = nodeSqliteDatabase(new DatabaseSync(":memory:"));
 * database.prepare("SELECT 1 AS one").all([]); // [{ one: 1 }]
 */
export function nodeSqliteDatabase(connection: DatabaseSync): KyselySqliteDatabase {
  const statements = new Map<string, NodeSqliteStatement>();
  let closed = false;
  return {
    prepare(sql: string): KyselySqliteStatement {
      let statement = statements.get(sql);
      if (statement === undefined) {
        statement = new NodeSqliteStatement(connection.prepare(sql), sql);
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
