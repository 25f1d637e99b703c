import type pg from "pg";
import { CtxkitError, StoreError } from "../../errors/index.ts";

/** Runs SQL whose table names are written `{sessions}`, `{messages}`, … (qualified with the store's schema). */
export interface PostgresQueries {
  rows<Row>(sql: string, parameters?: readonly unknown[]): Promise<Row[]>;
  row<Row>(sql: string, parameters?: readonly unknown[]): Promise<Row | undefined>;
  /** Runs a statement; returns the number of rows it changed. */
  run(sql: string, parameters?: readonly unknown[]): Promise<number>;
}

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
    code.startsWith("08") ||
    code === "57P01" ||
    code === "57P02" ||
    code === "57P03"
  );
}

/** The SQLSTATE of a `pg` error, if any. */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
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
  if (isConnectionError(error)) {
    return new StoreError(
      `${location}: lost the connection to PostgreSQL (${detail}); nothing of the interrupted write was kept — retry`,
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
function qualify(schema: string, table: string): string {
  return `"${schema.replaceAll('"', '""')}"."${table}"`;
}

/**
 * A `pg` pool with the store's schema, error mapping and transactions. Client errors (the server closing
 * connections) are absorbed so they never crash the process; the query they hit fails, the next reconnects.
 */
export class PostgresDatabase implements PostgresQueries {
  readonly pool: pg.Pool;
  readonly schema: string;
  /** Where the database is, for messages (the URL without its password). */
  readonly location: string;
  readonly #ownsPool: boolean;
  readonly #sql = new Map<string, string>();
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
  }

  /** SQL with `{table}` placeholders qualified. */
  sql(text: string): string {
    let resolved = this.#sql.get(text);
    if (resolved === undefined) {
      resolved = text.replace(/\{([a-z_]+)\}/g, (_, table: string) => qualify(this.schema, table));
      this.#sql.set(text, resolved);
    }
    return resolved;
  }

  async rows<Row>(sql: string, parameters: readonly unknown[] = []): Promise<Row[]> {
    this.#checkOpen();
    try {
      return (await this.pool.query(this.sql(sql), [...parameters])).rows as Row[];
    } catch (error) {
      throw toPostgresStoreError(error, this.location);
    }
  }

  async row<Row>(sql: string, parameters: readonly unknown[] = []): Promise<Row | undefined> {
    return (await this.rows<Row>(sql, parameters))[0];
  }

  async run(sql: string, parameters: readonly unknown[] = []): Promise<number> {
    this.#checkOpen();
    try {
      return (await this.pool.query(this.sql(sql), [...parameters])).rowCount ?? 0;
    } catch (error) {
      throw toPostgresStoreError(error, this.location);
    }
  }

  /**
   * Runs `body` in one transaction on one connection: committed whole or rolled back whole. A lost connection
   * rolls back on the server; the broken client is discarded.
   */
  async transaction<T>(body: (queries: PostgresQueries) => Promise<T>, begin = "BEGIN"): Promise<T> {
    this.#checkOpen();
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw toPostgresStoreError(error, this.location);
    }
    const queries: PostgresQueries = {
      rows: async <Row>(sql: string, parameters: readonly unknown[] = []) =>
        (await client.query(this.sql(sql), [...parameters])).rows as Row[],
      row: async <Row>(sql: string, parameters: readonly unknown[] = []) =>
        (await client.query(this.sql(sql), [...parameters])).rows[0] as Row | undefined,
      run: async (sql: string, parameters: readonly unknown[] = []) =>
        (await client.query(this.sql(sql), [...parameters])).rowCount ?? 0,
    };
    let broken = false;
    // pg-pool listens for errors of idle clients only: a checked-out client whose connection the server ends
    // between two queries would emit an unhandled 'error' and crash the process. The next query fails instead.
    const onError = () => (broken = true);
    client.on("error", onError);
    let committing = false;
    try {
      await client.query(begin);
      const result = await body(queries);
      committing = true;
      await client.query("COMMIT");
      return result;
    } catch (error) {
      broken ||= isConnectionError(error);
      if (!broken) await client.query("ROLLBACK").catch(() => (broken = true));
      if (committing && broken) throw commitLost(error, this.location);
      throw toPostgresStoreError(error, this.location);
    } finally {
      client.removeListener("error", onError);
      client.release(broken);
    }
  }

  /** A read-only transaction on one snapshot. */
  snapshot<T>(body: (queries: PostgresQueries) => Promise<T>): Promise<T> {
    return this.transaction(body, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  }

  #checkOpen(): void {
    if (this.#closed) throw new StoreError(`${this.location}: the store is closed; open it again`);
  }

  /** Ends the pool when the store created it (idempotent). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ownsPool) await this.pool.end();
  }
}
