/**
 * The contract between ctxkit's SQL stores and a database: a Kysely query builder for its dialect, the small
 * set of dialect differences (`StoreDialect`), and transactions that map failures to ctxkit errors. SQLite
 * (`node:sqlite`) and PostgreSQL (`pg`) implement it; the session, blob and memory stores are written once
 * against it.
 */
import type { Compilable, CompiledQuery, Kysely, RawBuilder } from "kysely";
import type { RecentBodies } from "./recent-bodies.ts";
import type { StoreDialect } from "./store-dialect.ts";
import type { StoreTables } from "./store-tables.ts";

/** A query as built or written (compiled on use), or already compiled (see `preparedQuery`). */
export type SqlQuery<Row> = Compilable<Row> | RawBuilder<Row> | CompiledQuery<Row>;

/** Runs queries on one connection (inside a transaction, or one autocommitted statement each). */
export interface SqlQueries {
  /** The rows of a query (typed by the caller: rows come back as the dialect's driver returns them). */
  all<Row>(query: SqlQuery<unknown>): Promise<Row[]>;
  /**
   * The rows of a query as arrays of its columns' values, in the order it selects them: for reads of many rows
   * (a session's history), where an object per row costs more than the row's own values.
   */
  tuples<Row extends readonly unknown[]>(query: SqlQuery<unknown>): Promise<Row[]>;
  /** The first row of a query. */
  first<Row>(query: SqlQuery<unknown>): Promise<Row | undefined>;
  /** Runs a statement; returns the number of rows it changed. */
  run(query: SqlQuery<unknown>): Promise<number>;
  /**
   * Runs a statement whose row count nobody needs: now, or (PostgreSQL, inside a transaction) with the next
   * statement or the COMMIT, one round trip fewer. Statements still run in the order they were given, and its
   * failure still fails the transaction.
   */
  defer(query: SqlQuery<unknown>): Promise<void>;
}

/** What queries are built with: a dialect and a builder. */
export interface SqlTarget {
  /** What differs between SQLite and PostgreSQL. */
  readonly dialect: StoreDialect;
  /**
   * Builds queries for this database (on PostgreSQL, tables qualified with the store's schema; in `sql`
   * templates write tables as `dialect.table(name)`).
   */
  readonly builder: Kysely<StoreTables>;
  /** The messages this connection wrote lately, for the drain of their search words (none: parse the bodies). */
  readonly recentBodies?: RecentBodies;
}

/** Options of `SqlDatabase.read`. */
export interface ReadOptions {
  /**
   * The reads take a long run of rows in the order of an index that holds them (a session's history), so the
   * database should follow that index rather than sort: PostgreSQL's planner may prefer scanning and sorting,
   * which for a long session spills to disk (the index scan was 2.5× faster for 100k messages). SQLite follows
   * the index anyway.
   */
  readonly indexOrder?: boolean;
}

/** A ctxkit database: where it is, its dialect, its query builder and its transactions. */
export interface SqlDatabase extends SqlTarget {
  /** Where the database is, for messages (a file path, or a URL without its password and the schema). */
  readonly location: string;
  /** One autocommitted statement per call; for reads that need no snapshot across statements. */
  readonly queries: SqlQueries;
  /**
   * Runs `body` in one write transaction: committed whole or rolled back whole; failures become ctxkit errors.
   * Writers that must not interleave take `dialect.lock` inside it, or name their key as `lockKey`: the same
   * lock, taken as the transaction begins (PostgreSQL: in the same round trip as BEGIN).
   */
  write<T>(body: (queries: SqlQueries) => Promise<T>, lockKey?: string): Promise<T>;
  /**
   * Runs `body` in a write transaction of its own, never as part of another (SQLite: after the writer thread's
   * group transaction under way commits, never as a savepoint of it). For work that must stay out of a turn's
   * transaction, such as indexing search words.
   */
  writeApart<T>(body: (queries: SqlQueries) => Promise<T>): Promise<T>;
  /**
   * Runs `body`, which sends one statement, autocommitted (PostgreSQL: one round trip, no BEGIN or COMMIT);
   * absent where a write costs no round trips (SQLite).
   */
  writeOne?<T>(body: (queries: SqlQueries) => Promise<T>): Promise<T>;
  /** False where `writeApart` cannot run now (read-only; SQLite: from inside the writer thread's group). */
  readonly canWriteApart: boolean;
  /** Runs `body` in a read transaction, so its queries see one snapshot. */
  read<T>(body: (queries: SqlQueries) => Promise<T>, options?: ReadOptions): Promise<T>;
  close(): Promise<void>;
}

/** The compiled form of a query (`sql` templates are compiled by `builder`'s dialect). */
export function compiledOf<Row>(query: SqlQuery<Row>, builder: Kysely<StoreTables>): CompiledQuery<Row> {
  if ("isRawBuilder" in query) return query.compile(builder);
  if ("compile" in query) return query.compile();
  return query;
}

/**
 * `SqlQueries` over a Kysely instance (the root one, or one bound to a connection by `db.connection()`).
 *
 * @example
 * await db.connection().execute(async (connection) => body(sqlQueries(connection)));
 */
export function sqlQueries(executor: Kysely<StoreTables>): SqlQueries {
  const execute = (query: SqlQuery<unknown>) => executor.executeQuery(compiledOf(query, executor));
  return {
    all: async <Row>(query: SqlQuery<unknown>) => (await execute(query)).rows as Row[],
    tuples: async <Row extends readonly unknown[]>(query: SqlQuery<unknown>) =>
      (await execute(query)).rows.map((row) => Object.values(row as object)) as unknown as Row[],
    first: async <Row>(query: SqlQuery<unknown>) => (await execute(query)).rows[0] as Row | undefined,
    run: async (query: SqlQuery<unknown>) => Number((await execute(query)).numAffectedRows ?? 0n),
    defer: async (query: SqlQuery<unknown>) => void (await execute(query)),
  };
}

/**
 * `queries` that first check `ready` (e.g. that the store is open) and map failures with `mapError` (e.g. to
 * ctxkit errors).
 *
 * @example
 * const queries = guardedQueries(sqlQueries(db), () => checkOpen(), (error) => toStoreError(error, path));
 */
export function guardedQueries(
  queries: SqlQueries,
  ready: () => void,
  mapError: (error: unknown) => Error,
): SqlQueries {
  const guard = async <T>(run: () => Promise<T>): Promise<T> => {
    ready();
    try {
      return await run();
    } catch (error) {
      throw mapError(error);
    }
  };
  return {
    all: <Row>(query: SqlQuery<unknown>) => guard(() => queries.all<Row>(query)),
    tuples: <Row extends readonly unknown[]>(query: SqlQuery<unknown>) =>
      guard(() => queries.tuples<Row>(query)),
    first: <Row>(query: SqlQuery<unknown>) => guard(() => queries.first<Row>(query)),
    run: (query: SqlQuery<unknown>) => guard(() => queries.run(query)),
    defer: (query: SqlQuery<unknown>) => guard(() => queries.defer(query)),
  };
}
