import type { DatabaseSync } from "node:sqlite";
import { Kysely, SqliteDialect } from "kysely";
import { CorruptStoreError, FileAccessError, StoreError } from "../../errors/index.ts";
import { nodeSqliteDatabase, type NodeSqliteDatabase } from "../sql/node-sqlite-dialect.ts";
import {
  compiledOf,
  guardedQueries,
  sqlQueries,
  type SqlDatabase,
  type SqlQueries,
  type SqlQuery,
} from "../sql/sql-database.ts";
import { RecentBodies } from "../sql/recent-bodies.ts";
import type { StoreTables } from "../sql/store-tables.ts";
import { toStoreError } from "./sqlite-errors.ts";
import { sqliteStoreDialect } from "./sqlite-store-dialect.ts";

export { isUniqueViolation, sqliteErrorCode, toStoreError } from "./sqlite-errors.ts";

/** The write transaction under way (or queued last) on each file, per thread. */
const writersOfFile = new Map<string, Promise<void>>();

/**
 * Runs `body` once the writes this thread already started on the same file have ended. `BEGIN IMMEDIATE` waits
 * for another connection's write lock by sleeping in SQLite's busy handler, which blocks the thread: were that
 * connection's transaction one of this thread's, paused at an `await`, it could never finish. Writers of other
 * threads and processes are not affected (their transactions go on while this thread sleeps).
 */
async function afterOtherWriters<T>(location: string, body: () => Promise<T>): Promise<T> {
  if (location === ":memory:") return body();
  const previous = writersOfFile.get(location);
  let done!: () => void;
  const current = new Promise<void>((resolve) => (done = resolve));
  writersOfFile.set(location, current);
  try {
    await previous;
    return await body();
  } finally {
    done();
    if (writersOfFile.get(location) === current) writersOfFile.delete(location);
  }
}

/**
 * Queries run straight on the connection's cached statements, as Kysely's SQLite driver would run them, without
 * its per-query machinery (a tenth of a millisecond per append): for a transaction that owns the connection, or
 * an autocommitted query while no transaction is open on it.
 */
function ownedQueries(statements: NodeSqliteDatabase, builder: Kysely<StoreTables>): SqlQueries {
  const execute = (query: SqlQuery<unknown>): { rows: unknown[]; changes: number } => {
    const { sql, parameters } = compiledOf(query, builder);
    const statement = statements.prepare(sql);
    if (statement.reader) return { rows: statement.all(parameters), changes: 0 };
    return { rows: [], changes: Number(statement.run(parameters).changes) };
  };
  return {
    all: async <Row>(query: SqlQuery<unknown>) => execute(query).rows as Row[],
    tuples: async <Row extends readonly unknown[]>(query: SqlQuery<unknown>) => {
      const { sql, parameters } = compiledOf(query, builder);
      return statements.prepare(sql).tuples(parameters) as unknown as Row[];
    },
    first: async <Row>(query: SqlQuery<unknown>) => execute(query).rows[0] as Row | undefined,
    run: async (query: SqlQuery<unknown>) => execute(query).changes,
    defer: async (query: SqlQuery<unknown>) => void execute(query),
  };
}

/**
 * One `node:sqlite` connection behind Kysely, with transactions that map failures to ctxkit errors. Kysely
 * hands the one connection to one transaction at a time; the write transactions of one thread on one file (from
 * any of its connections) run one after the other; `BEGIN IMMEDIATE` plus the busy timeout serialise writers of
 * other threads and processes.
 */
export class SqliteDatabase implements SqlDatabase {
  readonly connection: DatabaseSync;
  readonly location: string;
  readonly readOnly: boolean;
  readonly dialect = sqliteStoreDialect;
  readonly recentBodies = new RecentBodies();
  readonly builder: Kysely<StoreTables>;
  readonly queries: SqlQueries;
  /** The queries of a transaction, which owns the connection while it runs. */
  readonly #owned: SqlQueries;
  #closed = false;
  /** The queries of the group transaction while `group` runs: each `write` inside it is a savepoint of it. */
  #group: SqlQueries | undefined;
  /** Undefined until checked; then the problem found, or null for a sound file. */
  #damage: string | null | undefined;

  constructor(
    connection: DatabaseSync,
    location: string,
    options: { readonly readOnly?: boolean; readonly integrityCheck?: boolean } = {},
  ) {
    this.connection = connection;
    this.location = location;
    this.readOnly = options.readOnly === true;
    if (options.integrityCheck === false) this.#damage = null;
    const statements = nodeSqliteDatabase(connection);
    // No plugins or logging: a transaction's queries bypass Kysely's executor (ownedQueries), so anything that
    // transforms results there would make them differ from the autocommitted ones.
    this.builder = new Kysely<StoreTables>({ dialect: new SqliteDialect({ database: statements }) });
    this.#owned = ownedQueries(statements, this.builder);
    // An autocommitted query runs straight on the connection too, unless a transaction is open on it (then it
    // waits its turn in Kysely's queue): one synchronous statement cannot interleave with anything else.
    const queued = sqlQueries(this.builder);
    const direct = (): SqlQueries => (connection.isTransaction ? queued : this.#owned);
    this.queries = guardedQueries(
      {
        all: (query) => direct().all(query),
        tuples: (query) => direct().tuples(query),
        first: (query) => direct().first(query),
        run: (query) => direct().run(query),
        defer: (query) => direct().defer(query),
      },
      () => this.#checkOpen(),
      (error) => toStoreError(error, this.location),
    );
  }

  /**
   * Runs `body` in a write transaction (`BEGIN IMMEDIATE`): committed whole or rolled back whole. The first
   * write of a connection checks the file first (`PRAGMA quick_check`): nothing is written into a damaged one.
   * Inside `group`, it is a savepoint of the group's transaction instead.
   */
  async write<T>(body: (queries: SqlQueries) => Promise<T>): Promise<T> {
    this.#checkWritable();
    if (this.#group) return this.#savepoint(this.#group, body);
    return this.#transaction("BEGIN IMMEDIATE", body, true);
  }

  writeApart<T>(body: (queries: SqlQueries) => Promise<T>): Promise<T> {
    this.#checkWritable();
    return this.#transaction("BEGIN IMMEDIATE", body, true);
  }

  get canWriteApart(): boolean {
    return this.#group === undefined && !this.readOnly && !this.#closed;
  }

  /**
   * Runs `body` in one write transaction in which every `write` is a savepoint: a write that fails is rolled
   * back alone, the others commit together at the end (group commit). Returns after COMMIT, i.e. once the
   * group is durable. SQLite rolls a whole transaction back on some I/O and disk-full errors: `body` must check
   * `connection.isTransaction` after each write (the next write then starts a new transaction).
   */
  async group<T>(body: () => Promise<T>): Promise<T> {
    this.#checkWritable();
    return this.#transaction(
      "BEGIN IMMEDIATE",
      async (queries) => {
        this.#group = queries;
        try {
          return await body();
        } finally {
          this.#group = undefined;
          if (!this.connection.isTransaction) this.connection.exec("BEGIN IMMEDIATE");
        }
      },
      true,
    );
  }

  /** Runs `body` in a read transaction, so multi-query reads see one snapshot. */
  read<T>(body: (queries: SqlQueries) => Promise<T>): Promise<T> {
    return this.#transaction("BEGIN", body, false);
  }

  /**
   * Undoes the failed write of a group; when even that fails, the whole transaction, so nothing of the write
   * can be committed with the others (the group then reports the earlier writes lost).
   */
  #undoWrite(): void {
    if (!this.connection.isTransaction) return;
    try {
      this.connection.exec("ROLLBACK TO write; RELEASE write");
    } catch {
      try {
        if (this.connection.isTransaction) this.connection.exec("ROLLBACK");
      } catch {
        // SQLite rolls back by itself on the errors that make ROLLBACK fail.
      }
    }
  }

  async #savepoint<T>(queries: SqlQueries, body: (queries: SqlQueries) => Promise<T>): Promise<T> {
    this.#checkIntegrity();
    try {
      if (!this.connection.isTransaction) this.connection.exec("BEGIN IMMEDIATE");
      this.connection.exec("SAVEPOINT write");
    } catch (error) {
      throw toStoreError(error, this.location);
    }
    try {
      const result = await body(queries);
      this.connection.exec("RELEASE write");
      return result;
    } catch (error) {
      this.#undoWrite();
      throw toStoreError(error, this.location);
    }
  }

  async #transaction<T>(
    begin: string,
    body: (queries: SqlQueries) => Promise<T>,
    write: boolean,
  ): Promise<T> {
    if (write) return afterOtherWriters(this.location, () => this.#run(begin, body, true));
    return this.#run(begin, body, false);
  }

  async #run<T>(begin: string, body: (queries: SqlQueries) => Promise<T>, write: boolean): Promise<T> {
    this.#checkOpen();
    try {
      return await this.builder.connection().execute(async () => {
        this.#checkOpen();
        if (write) this.#checkIntegrity();
        try {
          this.connection.exec(begin);
          const result = await body(this.#owned);
          this.connection.exec("COMMIT");
          return result;
        } catch (error) {
          if (this.connection.isTransaction) this.connection.exec("ROLLBACK");
          throw error;
        }
      });
    } catch (error) {
      throw toStoreError(error, this.location);
    }
  }

  #checkWritable(): void {
    this.#checkOpen();
    if (this.readOnly) {
      throw new FileAccessError(this.location, "the database was opened read-only; open it again to write");
    }
  }

  /** Refuses to write into a file whose pages are damaged; checked once per connection. */
  #checkIntegrity(): void {
    if (this.#damage === undefined) {
      try {
        const rows = this.connection.prepare("PRAGMA quick_check(1)").all() as { quick_check: string }[];
        const verdict = rows[0]?.quick_check ?? "ok";
        this.#damage =
          verdict === "ok"
            ? null
            : verdict.replace("*** in database main ***", "").replace(/\s+/g, " ").trim();
      } catch (error) {
        throw toStoreError(error, this.location);
      }
    }
    if (this.#damage !== null) {
      throw new CorruptStoreError(
        this.location,
        `the database is damaged (${this.#damage}); nothing was written to it`,
      );
    }
  }

  #checkOpen(): void {
    if (this.#closed) throw new StoreError(`${this.location}: the store is closed; open it again`);
  }

  /** True once `close` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Lets the transaction under way finish, then closes the connection (idempotent). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.builder
      .connection()
      .execute(async () => {})
      .catch(() => {});
    await this.builder.destroy();
  }
}
