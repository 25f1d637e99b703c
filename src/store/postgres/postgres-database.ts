import { createHash } from "node:crypto";
import { Kysely, PostgresDialect, type CompiledQuery } from "kysely";
import type pg from "pg";
import { CtxkitError, StoreError, ValidationError } from "../../errors/index.ts";
import {
  compiledOf,
  guardedQueries,
  sqlQueries,
  type ReadOptions,
  type SqlDatabase,
  type SqlQueries,
  type SqlQuery,
} from "../sql/sql-database.ts";
import { RecentBodies } from "../sql/recent-bodies.ts";
import type { StoreTables } from "../sql/store-tables.ts";
import { advisoryLockStatement, postgresStoreDialect, sqlState } from "./postgres-store-dialect.ts";

export { sqlState };

const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EHOSTUNREACH",
]);

/** True for errors that mean the connection is gone (the server rolled back any open transaction). */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string")
    return error instanceof Error && /Connection terminated|not queryable/i.test(error.message);
  return (
    CONNECTION_CODES.has(code) ||
    // 08P01 (protocol violation) is an error the server answers on a connection that stays usable.
    (code.startsWith("08") && code !== "08P01") ||
    code === "57P01" ||
    code === "57P02" ||
    code === "57P03"
  );
}

/** Codes of a connection that could not be made: no server there, or no such host. */
const UNREACHABLE_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EHOSTUNREACH", "EAI_AGAIN", "ENETUNREACH"]);

/** True when no connection could be made at all (so nothing was sent). */
function isUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && UNREACHABLE_CODES.has(code)) return true;
  // Node reports a refused connection to a name with several addresses (localhost) as an AggregateError.
  return error instanceof AggregateError && error.errors.length > 0 && error.errors.every(isUnreachable);
}

/**
 * The ctxkit error for a PostgreSQL failure; ctxkit errors pass through.
 *
 * @example
 * catch (error) { throw toPostgresStoreError(error, "postgres://db/ctxkit"); }
 */
export function toPostgresStoreError(error: unknown, location: string): CtxkitError {
  if (CtxkitError.isInstance(error)) return error;
  const detail = error instanceof Error ? error.message : String(error);
  const cause = { cause: error };
  if (isUnreachable(error)) {
    return new StoreError(
      `${location}: cannot reach PostgreSQL (${detail}); check the host and port of the URL and that the server ` +
        "is running — nothing was read or written",
      true,
      cause,
    );
  }
  if (isConnectionError(error)) {
    return new StoreError(
      `${location}: lost the connection to PostgreSQL (${detail}); a write it cut short was rolled back, ` +
        "nothing of it kept — retry",
      true,
      cause,
    );
  }
  const state = sqlState(error) ?? "";
  if (state === "40001" || state === "40P01" || state === "55P03") {
    return new StoreError(
      `${location}: a concurrent transaction got in the way (${detail}); retry`,
      true,
      cause,
    );
  }
  if (state === "53100" || state === "53200" || state === "53300") {
    return new StoreError(
      `${location}: the server is out of resources (${detail}); free space or connections and retry`,
      true,
      cause,
    );
  }
  if (state.startsWith("28") || state === "3D000") {
    return new StoreError(
      `${location}: cannot use the database (${detail}); check the URL, the user and the password`,
      false,
      cause,
    );
  }
  if (state === "22021" || state === "22P05") {
    // PostgreSQL text (and jsonb) cannot hold U+0000, which SQLite and json bodies can.
    return new ValidationError(
      `PostgreSQL cannot store this text (${detail}); remove the character U+0000 (NUL) from ids, names and session metadata`,
      [],
      cause,
    );
  }
  if (state === "25006" || state === "42501") {
    return new StoreError(
      `${location}: not allowed to write (${detail}); check the user's privileges`,
      false,
      cause,
    );
  }
  return new StoreError(`${location}: ${detail}`, false, cause);
}

/** The connection was lost while COMMIT was in flight: the server may or may not have committed. */
function commitLost(error: unknown, location: string): StoreError {
  const detail = error instanceof Error ? error.message : String(error);
  return new StoreError(
    `${location}: lost the connection to PostgreSQL while committing (${detail}); the write may or may not be stored — read the session again before retrying`,
    true,
    { cause: error },
  );
}

/** `"schema"."table"` for a schema and table name (identifiers quoted). */
export function qualify(schema: string, table: string): string {
  return `"${schema.replaceAll('"', '""')}"."${table}"`;
}

/** Text where a `$1` would not be a parameter: string literals, comments, dollar quotes, several statements. */
const NOT_ONLY_PARAMETERS = /'|;|--|\/\*|\$[A-Za-z_]*\$/;

/**
 * A query's text with its values written in as literals, for a simple (multi-statement) query; undefined when it
 * has other values than strings and numbers, or text in which a `$1` may be something else than a parameter (in
 * a string, a comment, a dollar-quoted body, a quoted identifier such as a schema name). Each value is a quoted
 * literal, which PostgreSQL types from its context as it types a bound parameter.
 */
function withLiterals(compiled: CompiledQuery, client: pg.PoolClient): string | undefined {
  const text = compiled.sql;
  if (NOT_ONLY_PARAMETERS.test(text)) return undefined;
  for (const [identifier] of text.matchAll(/"(?:[^"]|"")*"/g)) if (identifier.includes("$")) return undefined;
  const literals: string[] = [];
  for (const value of compiled.parameters) {
    // A NUL cannot be sent in a query's text (the server refuses the whole message); as a bound parameter it is
    // refused with an error that names it.
    if (typeof value === "string" && value.includes("\u0000")) return undefined;
    if (typeof value === "string") literals.push(client.escapeLiteral(value));
    else if (typeof value === "number" && Number.isFinite(value)) literals.push(`'${value}'`);
    else return undefined;
  }
  return text.replace(/\$(\d+)/g, (match, index: string) => literals[Number(index) - 1] ?? match);
}

/**
 * The queries of one transaction on its own client. What can wait is sent with the next query as one simple
 * query, when that query's values can be written into its text (`withLiterals`): BEGIN (with the transaction's
 * lock or settings) goes with the first query, deferred statements with the next query or the COMMIT.
 * PostgreSQL runs the statements of a simple query in order, each seeing what the ones before it did (a lock
 * taken first, then a fresh read), so a transaction costs fewer round trips and means the same.
 */
class TransactionQueries implements SqlQueries {
  readonly #client: pg.PoolClient;
  readonly #builder: Kysely<StoreTables>;
  /** Statements not sent yet, in order: BEGIN first while it is waiting. */
  readonly #waiting: string[];
  #begun = false;

  constructor(client: pg.PoolClient, builder: Kysely<StoreTables>, begin: string) {
    this.#client = client;
    this.#builder = builder;
    this.#waiting = [begin];
  }

  async all<Row>(query: SqlQuery<unknown>): Promise<Row[]> {
    return (await this.#execute(query)).rows as Row[];
  }

  async tuples<Row extends readonly unknown[]>(query: SqlQuery<unknown>): Promise<Row[]> {
    return (await this.#execute(query, "array")).rows as Row[];
  }

  async first<Row>(query: SqlQuery<unknown>): Promise<Row | undefined> {
    return (await this.#execute(query)).rows[0] as Row | undefined;
  }

  async run(query: SqlQuery<unknown>): Promise<number> {
    return (await this.#execute(query)).rowCount ?? 0;
  }

  async defer(query: SqlQuery<unknown>): Promise<void> {
    const compiled = compiledOf(query, this.#builder);
    const text = withLiterals(compiled, this.#client);
    if (text === undefined) await this.#execute(compiled);
    else this.#waiting.push(text);
  }

  /** Commits what was sent and what waits (nothing when no statement was given). */
  async commit(): Promise<void> {
    if (this.#begun || this.#waiting.length > 1) await this.#send([...this.#waiting.splice(0), "COMMIT"]);
  }

  /** Rolls back what was sent (what waits is dropped). */
  async rollback(): Promise<void> {
    this.#waiting.length = 0;
    if (this.#begun) await this.#client.query("ROLLBACK");
  }

  /** Runs `query` after what waits; its rows as objects, or as arrays (`rowMode` "array"). */
  async #execute(query: SqlQuery<unknown>, rowMode?: "array"): Promise<pg.QueryResult> {
    const compiled = compiledOf(query, this.#builder);
    if (this.#waiting.length > 0) {
      const text = withLiterals(compiled, this.#client);
      if (text !== undefined) return this.#send([...this.#waiting.splice(0), text], rowMode);
      await this.#send(this.#waiting.splice(0));
    }
    return this.#client.query({
      text: compiled.sql,
      values: compiled.parameters as unknown[],
      ...(rowMode !== undefined && { rowMode }),
    });
  }

  /** Sends statements as one simple query; resolves with the last one's result. */
  async #send(statements: readonly string[], rowMode?: "array"): Promise<pg.QueryResult> {
    this.#begun = true;
    const text = statements.join("; ");
    const sent = rowMode === undefined ? this.#client.query(text) : this.#client.query({ text, rowMode });
    const result = (await sent) as unknown as pg.QueryResult | pg.QueryResult[];
    // A simple query of several statements answers with one result per statement.
    return Array.isArray(result) ? result.at(-1)! : result;
  }
}

/** Names of the prepared statements of `clientQueries`, by text (a few texts per schema: the one-statement turns). */
const statementNames = new Map<string, string>();

/** The name a statement is prepared under on each connection: the same for the same text. */
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `ctk_${createHash("sha256").update(text).digest("hex").slice(0, 32)}`;
    statementNames.set(text, name);
  }
  return name;
}

/**
 * Queries sent as they come on one client, each on its own (autocommitted, outside a transaction), as named
 * prepared statements: the server parses and plans a turn's statement (several data-modifying CTEs) once per
 * connection rather than at every turn.
 */
function clientQueries(client: pg.PoolClient, builder: Kysely<StoreTables>): SqlQueries {
  const execute = (query: SqlQuery<unknown>, rowMode?: "array") => {
    const compiled = compiledOf(query, builder);
    return client.query({
      name: statementName(compiled.sql),
      text: compiled.sql,
      values: compiled.parameters as unknown[],
      ...(rowMode !== undefined && { rowMode }),
    });
  };
  return {
    all: async <Row>(query: SqlQuery<unknown>) => (await execute(query)).rows as Row[],
    tuples: async <Row extends readonly unknown[]>(query: SqlQuery<unknown>) =>
      (await execute(query, "array")).rows as Row[],
    first: async <Row>(query: SqlQuery<unknown>) => (await execute(query)).rows[0] as Row | undefined,
    run: async (query: SqlQuery<unknown>) => (await execute(query)).rowCount ?? 0,
    defer: async (query: SqlQuery<unknown>) => void (await execute(query)),
  };
}

/**
 * A `pg` pool behind Kysely (`PostgresDialect`), with the store's schema, error mapping and transactions. Client
 * errors (the server closing connections) are absorbed so they never crash the process; the query they hit
 * fails, the next reconnects.
 */
export class PostgresDatabase implements SqlDatabase {
  readonly pool: pg.Pool;
  readonly schema: string;
  /** Where the database is, for messages (the URL without its password). */
  readonly location: string;
  readonly dialect: ReturnType<typeof postgresStoreDialect>;
  readonly recentBodies = new RecentBodies();
  readonly builder: Kysely<StoreTables>;
  readonly queries: SqlQueries;
  readonly #root: Kysely<StoreTables>;
  readonly #ownsPool: boolean;
  #closed = false;

  constructor(pool: pg.Pool, options: { schema: string; location: string; ownsPool: boolean }) {
    this.pool = pool;
    this.schema = options.schema;
    this.location = options.location;
    this.#ownsPool = options.ownsPool;
    pool.on("error", () => {});
    // pg-pool listens to a client's errors only while it is idle, and once during a pool.query(): a server that
    // ends a connection can still deliver its FATAL message (or a second error) outside both, and an 'error'
    // event nobody listens to kills the process. The query it hit fails on its own; this only keeps us alive.
    pool.on("connect", (client) => client.on("error", () => {}));
    this.dialect = postgresStoreDialect(options.schema);
    this.#root = new Kysely<StoreTables>({ dialect: new PostgresDialect({ pool }) });
    this.builder = this.#root.withSchema(options.schema);
    this.queries = guardedQueries(
      sqlQueries(this.builder),
      () => this.#checkOpen(),
      (error) => toPostgresStoreError(error, this.location),
    );
  }

  /**
   * Runs `body` in one transaction on one connection: committed whole or rolled back whole. A lost connection
   * rolls back on the server (the broken client leaves the pool). With `lockKey`, BEGIN and the advisory lock
   * of that key go to the server together, with the body's first query when they can: one round trip.
   */
  write<T>(body: (queries: SqlQueries) => Promise<T>, lockKey?: string): Promise<T> {
    return this.transaction(
      body,
      lockKey === undefined ? "BEGIN" : `BEGIN; ${advisoryLockStatement(lockKey)}`,
    );
  }

  writeApart<T>(body: (queries: SqlQueries) => Promise<T>): Promise<T> {
    return this.transaction(body);
  }

  get canWriteApart(): boolean {
    return !this.#closed;
  }

  /** A pooled client of this open database (a failure to connect is a `StoreError` naming the database). */
  async #connect(): Promise<pg.PoolClient> {
    this.#checkOpen();
    try {
      return await this.pool.connect();
    } catch (error) {
      throw toPostgresStoreError(error, this.location);
    }
  }

  /**
   * Runs `body`, which sends one statement, autocommitted on a pooled client (no BEGIN or COMMIT: one round trip
   * for a write that fits in one statement). A connection lost while it runs may have lost the write or
   * committed it, and says so.
   */
  async writeOne<T>(body: (queries: SqlQueries) => Promise<T>): Promise<T> {
    const client = await this.#connect();
    let broken = false;
    try {
      return await body(clientQueries(client, this.builder));
    } catch (error) {
      broken = isConnectionError(error);
      if (broken) throw commitLost(error, this.location);
      throw toPostgresStoreError(error, this.location);
    } finally {
      client.release(broken);
    }
  }

  /**
   * A read-only transaction on one snapshot. With `indexOrder`, sorts are off for it (`SET LOCAL enable_sort`,
   * sent with BEGIN): the planner then reads in the order of the index that has it.
   */
  read<T>(body: (queries: SqlQueries) => Promise<T>, options: ReadOptions = {}): Promise<T> {
    const begin = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
    return this.transaction(
      body,
      options.indexOrder === true ? `${begin}; SET LOCAL enable_sort = off` : begin,
    );
  }

  /**
   * Runs `body` in one transaction begun with `begin`, on a pooled client of its own (queries go straight to
   * `pg`; Kysely only compiles them). BEGIN travels with the first query, deferred statements with the next one
   * or the COMMIT (see `TransactionQueries`).
   */
  async transaction<T>(body: (queries: SqlQueries) => Promise<T>, begin = "BEGIN"): Promise<T> {
    const client = await this.#connect();
    const queries = new TransactionQueries(client, this.builder, begin);
    let committing = false;
    let broken = false;
    try {
      const result = await body(queries);
      committing = true;
      await queries.commit();
      return result;
    } catch (error) {
      broken = isConnectionError(error);
      if (!broken) await queries.rollback().catch(() => {});
      if (committing && broken) throw commitLost(error, this.location);
      throw toPostgresStoreError(error, this.location);
    } finally {
      // A client whose connection broke is destroyed rather than pooled.
      client.release(broken);
    }
  }

  #checkOpen(): void {
    if (this.#closed) throw new StoreError(`${this.location}: the store is closed; open it again`);
  }

  /** Ends the pool when the store created it (idempotent); a pool you passed stays open. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (!this.#ownsPool) return;
    await this.#root.destroy();
    if (!(this.pool as { ended?: boolean }).ended) await this.pool.end();
  }
}
