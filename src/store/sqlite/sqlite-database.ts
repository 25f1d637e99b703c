import { type DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { CorruptStoreError, CtxkitError, FileAccessError, StoreError } from "../../errors/index.ts";

/** SQLite primary result codes ctxkit reacts to (https://sqlite.org/rescode.html). */
const SQLITE = {
  busy: 5,
  locked: 6,
  readOnly: 8,
  ioError: 10,
  corrupt: 11,
  full: 13,
  cantOpen: 14,
  notADatabase: 26,
};

/** The extended result code of a `node:sqlite` error, or undefined for other errors. */
export function sqliteErrorCode(error: unknown): number | undefined {
  const code = (error as { errcode?: unknown } | null)?.errcode;
  return typeof code === "number" ? code : undefined;
}

/** True for a UNIQUE or PRIMARY KEY constraint failure. */
export function isUniqueViolation(error: unknown): boolean {
  const code = sqliteErrorCode(error);
  return code === 2067 || code === 1555;
}

/**
 * The ctxkit error for a SQLite failure: a damaged file or a non-database becomes `CorruptStoreError`; a
 * read-only or unopenable file `FileAccessError`; busy, full and I/O failures become `StoreError`s that say
 * what to do. ctxkit errors pass through.
 *
 * @example
 * try { … } catch (error) { throw toStoreError(error, "/home/ada/.ctxkit/ctxkit.db"); }
 */
export function toStoreError(error: unknown, location: string): CtxkitError {
  if (CtxkitError.isInstance(error)) return error;
  const code = sqliteErrorCode(error);
  const detail = error instanceof Error ? error.message : String(error);
  const cause = { cause: error };
  switch (code === undefined ? undefined : code & 0xff) {
    case SQLITE.corrupt:
      return new CorruptStoreError(location, `the database is damaged (${detail})`, cause);
    case SQLITE.notADatabase:
      return new CorruptStoreError(location, `the file is not a database (${detail})`, cause);
    case SQLITE.busy:
    case SQLITE.locked:
      return new StoreError(
        `${location}: the database stayed locked by another writer (${detail}); retry, or raise busyTimeoutMs`,
        true,
        cause,
      );
    case SQLITE.full:
      return new StoreError(
        `${location}: the disk or the database size limit is full (${detail}); free space and retry`,
        true,
        cause,
      );
    case SQLITE.readOnly:
      return new FileAccessError(
        location,
        `the database cannot be written (${detail}); check the permissions of the file and its folder`,
        cause,
      );
    case SQLITE.cantOpen:
      return new FileAccessError(
        location,
        `cannot open the database (${detail}); check that the path is a file in a folder you may write`,
        cause,
      );
    case SQLITE.ioError:
      return new StoreError(`${location}: disk I/O error (${detail}); check the disk and retry`, true, cause);
    default:
      return new StoreError(`${location}: ${detail}`, false, cause);
  }
}

/**
 * One `node:sqlite` connection with cached statements and transactions that map failures to ctxkit errors.
 * `node:sqlite` is synchronous, so a transaction body never yields to other tasks of this process: writes
 * through one connection are serialised by construction, and `BEGIN IMMEDIATE` plus the busy timeout
 * serialise them against other processes.
 */
export class SqliteDatabase {
  readonly connection: DatabaseSync;
  readonly location: string;
  readonly readOnly: boolean;
  readonly #statements = new Map<string, StatementSync>();
  #closed = false;
  /** True while `group` runs: each `write` inside it is a savepoint of the group's one transaction. */
  #grouped = false;
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
  }

  /** A cached prepared statement. */
  statement(sql: string): StatementSync {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.connection.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** Rows of a query. */
  all<Row>(sql: string, ...parameters: SQLInputValue[]): Row[] {
    return this.statement(sql).all(...parameters) as Row[];
  }

  /** First row of a query. */
  get<Row>(sql: string, ...parameters: SQLInputValue[]): Row | undefined {
    return this.statement(sql).get(...parameters) as Row | undefined;
  }

  /** Runs a statement; returns the number of changed rows. */
  run(sql: string, ...parameters: SQLInputValue[]): number {
    return Number(this.statement(sql).run(...parameters).changes);
  }

  /**
   * Runs `body` in a write transaction (`BEGIN IMMEDIATE`): committed whole or rolled back whole. The first
   * write of a connection checks the file first (`PRAGMA quick_check`): nothing is written into a damaged one.
   */
  write<T>(body: () => T): T {
    this.#checkOpen();
    if (this.readOnly) {
      throw new FileAccessError(this.location, "the database was opened read-only; open it again to write");
    }
    this.#checkIntegrity();
    if (this.#grouped) return this.#savepoint(body);
    return this.#transaction("BEGIN IMMEDIATE", body);
  }

  /**
   * Runs `body` in one write transaction in which every `write` is a savepoint: a write that fails is rolled
   * back alone, the others commit together at the end (group commit). Returns after COMMIT, i.e. once the
   * group is durable. SQLite rolls a whole transaction back on some I/O and disk-full errors: `body` must check
   * `connection.isTransaction` after each write (the next write then starts a new transaction).
   */
  group<T>(body: () => T): T {
    if (this.readOnly) {
      throw new FileAccessError(this.location, "the database was opened read-only; open it again to write");
    }
    this.#grouped = true;
    try {
      return this.#transaction("BEGIN IMMEDIATE", body);
    } finally {
      this.#grouped = false;
    }
  }

  #savepoint<T>(body: () => T): T {
    if (!this.connection.isTransaction) this.connection.exec("BEGIN IMMEDIATE");
    this.connection.exec("SAVEPOINT write");
    try {
      const result = body();
      this.connection.exec("RELEASE write");
      return result;
    } catch (error) {
      if (this.connection.isTransaction) this.connection.exec("ROLLBACK TO write; RELEASE write");
      throw toStoreError(error, this.location);
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

  /** Runs `body` in a read transaction, so multi-query reads see one snapshot. */
  read<T>(body: () => T): T {
    return this.#transaction("BEGIN", body);
  }

  #transaction<T>(begin: string, body: () => T): T {
    this.#checkOpen();
    try {
      this.connection.exec(begin);
      const result = body();
      this.connection.exec("COMMIT");
      return result;
    } catch (error) {
      if (this.connection.isTransaction) this.connection.exec("ROLLBACK");
      throw toStoreError(error, this.location);
    }
  }

  #checkOpen(): void {
    if (this.#closed) throw new StoreError(`${this.location}: the store is closed; open it again`);
  }

  /** Closes the connection (idempotent). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#statements.clear();
    this.connection.close();
  }
}
