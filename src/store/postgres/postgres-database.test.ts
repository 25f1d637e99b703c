import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresForTests, type TestPostgres } from "../../../test/store/pg-server.ts";
import { StoreError, ValidationError } from "../../errors/index.ts";
import { PostgresDatabase } from "./postgres-database.ts";
import { recordingPool } from "./recording-pool.test-helpers.ts";

let server: TestPostgres | undefined;
beforeAll(async () => {
  server = await postgresForTests();
});
afterAll(async () => {
  await server?.stop();
});

/** A database on one connection that records the text of every query its client sends (one per round trip). */
function recordingDatabase() {
  const { pool, sent } = recordingPool(server!.url);
  const database = new PostgresDatabase(pool, { schema: "public", location: "test", ownsPool: true });
  return { database, sent };
}

describe("PostgresDatabase", () => {
  it("survives a client error outside any query (a server ending a connection), and queries on", async () => {
    const pool = new pg.Pool({ connectionString: server!.url, max: 2 });
    const database = new PostgresDatabase(pool, { schema: "public", location: "test", ownsPool: true });
    const client = await pool.connect();
    // Checked out and between queries: neither pg-pool nor a query listens to this client now.
    expect(() =>
      client.emit("error", new Error("terminating connection due to administrator command")),
    ).not.toThrow();
    client.release(true);
    expect(await database.queries.first(sql`SELECT 1 AS one`)).toEqual({ one: 1 });
    await database.close();
  });

  it("reads in index order with sorts off for that transaction only", async () => {
    const pool = new pg.Pool({ connectionString: server!.url, max: 1 });
    const database = new PostgresDatabase(pool, { schema: "public", location: "test", ownsPool: true });
    const sorting = (options?: { indexOrder?: boolean }) =>
      database.read(
        async (queries) => (await queries.first<{ enable_sort: string }>(sql`SHOW enable_sort`))?.enable_sort,
        options,
      );
    expect(await sorting({ indexOrder: true })).toBe("off");
    // The same (only) connection afterwards: SET LOCAL ended with the transaction.
    expect(await sorting()).toBe("on");
    expect(await database.queries.first(sql`SHOW enable_sort`)).toEqual({ enable_sort: "on" });
    await database.close();
  });

  it("reads rows as arrays of column values, sent with BEGIN, after it, and autocommitted", async () => {
    const { database, sent } = recordingDatabase();
    const rows = sql`SELECT n, n * 10 AS tenfold FROM generate_series(1, ${2}::int) AS n`;
    const expected = [
      [1, 10],
      [2, 20],
    ];
    const read = await database.read(async (queries) => [
      await queries.tuples<[number, number]>(rows),
      await queries.tuples<[number, number]>(rows),
    ]);
    expect(read).toEqual([expected, expected]);
    // The first went with BEGIN in one round trip, the second on its own.
    expect(sent[0]).toMatch(/^BEGIN [^;]*; SELECT n/);
    expect(sent[1]).toMatch(/^SELECT n/);
    expect(await database.queries.tuples(rows)).toEqual(expected);
    await database.close();
  });

  it("sends BEGIN and the lock with a transaction's first query, values written in exactly", async () => {
    const { database, sent } = recordingDatabase();
    const tricky = "it's a \\ back'slash; $1 -- not a comment";
    const result = await database.write(async (queries) => {
      const first = await queries.first<{ text: string; next: number }>(
        sql`SELECT ${tricky}::text AS text, ${41}::int + 1 AS next`,
      );
      const locks = await queries.first<{ held: string }>(
        sql`SELECT count(*)::text AS held FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()`,
      );
      return { ...first, held: locks?.held };
    }, "session-1");
    expect(result).toEqual({ text: tricky, next: 42, held: "1" });
    // One round trip for BEGIN, the lock and the first query; one for the second; one for COMMIT.
    expect(sent).toHaveLength(3);
    expect(sent[0]).toMatch(/^BEGIN; SELECT pg_advisory_xact_lock\(.*\); SELECT +E?'/);
    expect(sent[2]).toBe("COMMIT");

    // A first query with quotes of its own is sent after BEGIN, as is; the lock ended with the transaction.
    sent.length = 0;
    const held = await database.write(
      (queries) =>
        queries.first<{ held: string }>(
          sql`SELECT count(*)::text AS held FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()`,
        ),
      "session-1",
    );
    expect(held).toEqual({ held: "1" });
    expect(sent).toHaveLength(3);
    expect(sent[0]).toMatch(/^BEGIN; SELECT pg_advisory_xact_lock\(.*\)$/);
    await database.close();
  });

  it("sends deferred statements with the COMMIT, in order, and keeps nothing when one fails", async () => {
    const { database, sent } = recordingDatabase();
    await database.queries.run(sql`CREATE TABLE deferred_rows (position int, value text)`);
    sent.length = 0;
    await database.write(async (queries) => {
      await queries.defer(sql`INSERT INTO deferred_rows VALUES (${1}, ${"first"})`);
      await queries.defer(sql`INSERT INTO deferred_rows VALUES (${2}, ${"second"})`);
    });
    expect(sent).toEqual([
      "BEGIN; INSERT INTO deferred_rows VALUES ('1', 'first'); INSERT INTO deferred_rows VALUES ('2', 'second'); COMMIT",
    ]);

    const failed = await database
      .write(async (queries) => {
        await queries.run(sql`INSERT INTO deferred_rows VALUES (${3}, ${"third"})`);
        await queries.defer(sql`INSERT INTO no_such_table VALUES (${4})`);
      })
      .catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(StoreError);
    const rows = await database.queries.all<{ value: string }>(
      sql`SELECT value FROM deferred_rows ORDER BY position`,
    );
    expect(rows.map((row) => row.value)).toEqual(["first", "second"]);
    await database.close();
  });

  it("writes values into a query whose quoted identifiers follow its placeholders, and never a NUL", async () => {
    const { database, sent } = recordingDatabase();
    await database.queries.run(sql`CREATE TABLE quoted_rows ("position" int, "value" text)`);
    sent.length = 0;
    await database.write(async (queries) => {
      await queries.defer(
        sql`INSERT INTO "quoted_rows" ("position", "value") SELECT ${1}, ${"one"} WHERE NOT EXISTS (SELECT FROM "quoted_rows")`,
      );
    });
    expect(sent).toEqual([
      `BEGIN; INSERT INTO "quoted_rows" ("position", "value") SELECT '1', 'one' WHERE NOT EXISTS (SELECT FROM "quoted_rows"); COMMIT`,
    ]);
    // A NUL cannot travel in a query's text: bound, it is refused by name, and the connection stays usable.
    const refused = await database
      .write((queries) => queries.run(sql`INSERT INTO quoted_rows VALUES (${2}, ${"nul\u0000"})`))
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).message).toMatch(/U\+0000/);
    expect(await database.queries.all(sql`SELECT "value" FROM quoted_rows`)).toEqual([{ value: "one" }]);
    await database.close();
  });

  it("keeps a $ in a quoted identifier (a schema name) out of the values it writes in", async () => {
    const pool = new pg.Pool({ connectionString: server!.url, max: 1 });
    const schema = "odd$1schema";
    const database = new PostgresDatabase(pool, { schema, location: "test", ownsPool: true });
    const table = sql.raw(`"${schema}".rows`);
    await database.queries.run(sql`CREATE SCHEMA ${sql.raw(`"${schema}"`)}`);
    await database.queries.run(sql`CREATE TABLE ${table} (value text)`);
    await database.write(async (queries) => {
      await queries.run(sql`INSERT INTO ${table} VALUES (${"kept"})`);
      await queries.defer(sql`INSERT INTO ${table} VALUES (${"deferred"})`);
    }, "odd");
    const rows = await database.queries.all<{ value: string }>(
      sql`SELECT value FROM ${table} ORDER BY value`,
    );
    expect(rows.map((row) => row.value)).toEqual(["deferred", "kept"]);
    await database.close();
  });
});
