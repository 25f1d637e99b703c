import pg from "pg";
import { ADVISORY_LOCK_SPACE } from "./postgres-store-dialect.ts";

/** First key of the turn locks: beside the store's own write locks (`ADVISORY_LOCK_SPACE`), never one of them. */
const TURN_LOCK_SPACE = ADVISORY_LOCK_SPACE + 1;

/**
 * Locks held across the servers sharing one PostgreSQL database, one per session, for as long as a turn runs
 * (the model call included): session-level advisory locks on one connection of their own. A server that dies
 * loses its connection, and PostgreSQL releases its locks at once. When the connection is lost the locks it held
 * are gone; the store's own check of each write (`expectedNextSeq`) still refuses a stale one.
 *
 * @example
 * const locks = new PostgresTurnLocks("postgres://db/ctxkit");
 * const unlock = await locks.tryLock("acme/ses_1"); // undefined: another server holds it
 */
export class PostgresTurnLocks {
  readonly #connectionString: string;
  #client: Promise<pg.Client> | undefined;
  #closed = false;

  constructor(connectionString: string) {
    this.#connectionString = connectionString;
  }

  #connect(): Promise<pg.Client> {
    if (this.#closed) return Promise.reject(new Error("the turn locks are closed"));
    if (this.#client === undefined) {
      const client = new pg.Client({ connectionString: this.#connectionString, keepAlive: true });
      const connecting = client.connect().then(() => client);
      const forget = () => {
        if (this.#client === connecting) this.#client = undefined;
      };
      client.on("error", forget);
      client.on("end", forget);
      connecting.catch(forget);
      this.#client = connecting;
    }
    return this.#client;
  }

  /**
   * Takes the lock of `key` when no other server holds it: resolves with what releases it, or undefined when it
   * is held elsewhere. Rejects when the database cannot be reached.
   */
  async tryLock(key: string): Promise<(() => Promise<void>) | undefined> {
    const connecting = this.#connect();
    const client = await connecting;
    const { rows } = await client.query<{ locked: boolean }>(
      "SELECT pg_try_advisory_lock($1, hashtext($2)) AS locked",
      [TURN_LOCK_SPACE, key],
    );
    if (rows[0]?.locked !== true) return undefined;
    return async () => {
      // A lock of a connection that has gone was released with it.
      if (this.#client !== connecting) return;
      await client
        .query("SELECT pg_advisory_unlock($1, hashtext($2))", [TURN_LOCK_SPACE, key])
        .catch(() => undefined);
    };
  }

  /** Ends the connection, releasing every lock it holds. */
  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = undefined;
    if (client !== undefined) await (await client.catch(() => undefined))?.end().catch(() => undefined);
  }
}
