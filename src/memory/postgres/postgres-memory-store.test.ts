import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresForTests, type TestPostgres } from "../../../test/store/pg-server.ts";
import { CtxkitError } from "../../errors/index.ts";
import { openPostgresSessionStore } from "../../store/postgres/open-postgres-session-store.ts";
import { describeMemoryStoreConformance } from "../memory-store-conformance.test-helpers.ts";
import type { MemoryStoreOptions } from "../memory-store.ts";
import { openPostgresMemoryStore } from "./open-postgres-memory-store.ts";
import { POSTGRES_SCHEMA_VERSION } from "../../store/postgres/postgres-schema.ts";

let server: TestPostgres | undefined;
beforeAll(async () => {
  server = await postgresForTests();
});
afterAll(async () => {
  await server?.stop();
});

const freshSchema = () => `m_${randomUUID().replaceAll("-", "")}`;
const open = (schema: string, options: MemoryStoreOptions = {}) =>
  openPostgresMemoryStore({ ...options, connectionString: server!.url, schema, poolSize: 4 });

describeMemoryStoreConformance("postgres", { create: (options) => open(freshSchema(), options) });

async function failure(promise: Promise<unknown>): Promise<CtxkitError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!CtxkitError.isInstance(error)) throw new Error(`expected a ctxkit error, got ${String(error)}`);
  return error;
}

async function admin<T>(body: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: server!.url });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}

describe("PostgreSQL memory store", () => {
  it("shares a schema and a pool with the session store", async () => {
    const schema = freshSchema();
    const pool = new pg.Pool({ connectionString: server!.url, max: 4 });
    const sessions = await openPostgresSessionStore({ pool, schema, retentionDays: 0 });
    const memories = await openPostgresMemoryStore({ pool, schema });
    await sessions.appendTurn("s1", [{ role: "user", content: [{ type: "text", text: "hello there" }] }]);
    await memories.add({ kind: "fact", content: "the user said hello", sourceSessionId: "s1" });
    await memories.close();
    await sessions.close();
    const reopened = await open(schema);
    expect((await reopened.search("hello")).map((hit) => hit.memory.sourceSessionId)).toEqual(["s1"]);
    await reopened.close();
    expect(await pool.query("SELECT 1 AS one")).toMatchObject({ rows: [{ one: 1 }] });
    await pool.end();
  });

  it("stores one memory when two servers add the same text at once", async () => {
    const schema = freshSchema();
    const stores = await Promise.all([open(schema), open(schema), open(schema)]);
    const results = await Promise.all(
      stores.flatMap((store) =>
        [1, 2, 3].map(() =>
          store.add({ kind: "preference", content: "Always run the linter before committing" }),
        ),
      ),
    );
    expect(results.filter((result) => !result.deduplicated).length).toBe(1);
    expect((await stores[0].list()).length).toBe(1);
    expect(await stores[1].version()).toBe(9);
    await Promise.all(stores.map((store) => store.close()));
  });

  it("refuses a schema written by a newer ctxkit, and leaves it as it was", async () => {
    const schema = freshSchema();
    const first = await open(schema);
    await first.add({ kind: "fact", content: "kept as it was" });
    await first.close();
    await admin((client) =>
      client.query(`INSERT INTO "${schema}".ctxkit_schema (version) VALUES ($1)`, [
        POSTGRES_SCHEMA_VERSION + 1,
      ]),
    );
    const tables = () =>
      admin(async (client) => ({
        versions: (await client.query(`SELECT version FROM "${schema}".ctxkit_schema ORDER BY version`)).rows,
        memories: (await client.query(`SELECT id, content FROM "${schema}".memories`)).rows,
      }));
    const before = await tables();
    const error = await failure(open(schema));
    expect(error.code).toBe("schema_too_new");
    expect(error.message).toContain("upgrade ctxkit");
    expect(await tables()).toEqual(before);
  });

  it("refuses memory tables a newer ctxkit recorded in the former memory_schema table", async () => {
    const schema = freshSchema();
    await admin(async (client) => {
      await client.query(`CREATE SCHEMA "${schema}"`);
      await client.query(`CREATE TABLE "${schema}".memory_schema (version integer NOT NULL)`);
      await client.query(`INSERT INTO "${schema}".memory_schema (version) VALUES (2)`);
    });
    expect((await failure(open(schema))).code).toBe("schema_too_new");
  });

  it("refuses a memories table ctxkit did not create", async () => {
    const schema = freshSchema();
    await admin(async (client) => {
      await client.query(`CREATE SCHEMA "${schema}"`);
      await client.query(`CREATE TABLE "${schema}".memories (id int)`);
    });
    expect((await failure(open(schema))).code).toBe("corrupt_store");
  });

  it("migrates once when many servers start together", async () => {
    const schema = freshSchema();
    const stores = await Promise.all(Array.from({ length: 5 }, () => open(schema)));
    const versions = await admin((client) =>
      client.query(`SELECT version FROM "${schema}".ctxkit_schema ORDER BY version`),
    );
    expect(versions.rows).toEqual(
      Array.from({ length: POSTGRES_SCHEMA_VERSION }, (_, index) => ({ version: index + 1 })),
    );
    await Promise.all(stores.map((store) => store.close()));
  });

  it("needs a connection string or a pool", async () => {
    expect((await failure(openPostgresMemoryStore({}))).code).toBe("invalid_input");
  });
});
