import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresForTests, type TestPostgres } from "../../../test/store/pg-server.ts";
import { PostgresDatabase } from "./postgres-database.ts";

let server: TestPostgres | undefined;
beforeAll(async () => {
  server = await postgresForTests();
});
afterAll(async () => {
  await server?.stop();
});

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
});
