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
});
