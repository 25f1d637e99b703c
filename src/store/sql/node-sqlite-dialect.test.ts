import { DatabaseSync } from "node:sqlite";
import { Kysely, sql } from "kysely";
import { describe, expect, it } from "vitest";
import { nodeSqliteDatabase, nodeSqliteDialect } from "./node-sqlite-dialect.ts";

interface Tables {
  notes: { id: number; title: string; body: Uint8Array | null };
}

function open(): { db: Kysely<Tables>; connection: DatabaseSync } {
  const connection = new DatabaseSync(":memory:");
  connection.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body BLOB)");
  return { db: new Kysely<Tables>({ dialect: nodeSqliteDialect(connection) }), connection };
}

describe("Kysely on node:sqlite", () => {
  it("inserts, returns, selects, updates and deletes through Kysely's SQLite dialect", async () => {
    const { db } = open();
    const inserted = await db
      .insertInto("notes")
      .values([
        { id: 1, title: "one", body: null },
        { id: 2, title: "two", body: new Uint8Array([1, 2, 3]) },
      ])
      .returning(["id", "title"])
      .execute();
    expect(inserted).toEqual([
      { id: 1, title: "one" },
      { id: 2, title: "two" },
    ]);
    const rows = await db.selectFrom("notes").selectAll().orderBy("id").execute();
    expect(rows.map((row) => ({ ...row }))).toEqual([
      { id: 1, title: "one", body: null },
      { id: 2, title: "two", body: new Uint8Array([1, 2, 3]) },
    ]);
    const updated = await db
      .updateTable("notes")
      .set({ title: "uno" })
      .where("id", "=", 1)
      .executeTakeFirst();
    expect(updated.numUpdatedRows).toBe(1n);
    const result = await db
      .insertInto("notes")
      .values({ id: 7, title: "seven", body: null })
      .executeTakeFirst();
    expect(result.insertId).toBe(7n);
    const deleted = await db.deleteFrom("notes").where("id", ">", 1).executeTakeFirst();
    expect(deleted.numDeletedRows).toBe(2n);
    expect(await db.selectFrom("notes").select("title").execute()).toEqual([{ title: "uno" }]);
    await db.destroy();
  });

  it("commits and rolls back transactions, and streams rows", async () => {
    const { db, connection } = open();
    await db.transaction().execute(async (transaction) => {
      await transaction.insertInto("notes").values({ id: 1, title: "kept", body: null }).execute();
    });
    await expect(
      db.transaction().execute(async (transaction) => {
        await transaction.insertInto("notes").values({ id: 2, title: "dropped", body: null }).execute();
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    expect(connection.isTransaction).toBe(false);
    const streamed: string[] = [];
    for await (const row of db.selectFrom("notes").select("title").stream()) streamed.push(row.title);
    expect(streamed).toEqual(["kept"]);
    await db.destroy();
  });

  it("tells statements that return rows from those that do not, PRAGMAs and RETURNING included", async () => {
    const { db } = open();
    const pragma = await sql<{ user_version: number }>`PRAGMA user_version`.execute(db);
    expect(pragma.rows).toEqual([{ user_version: 0 }]);
    const set = await sql`PRAGMA user_version = 5`.execute(db);
    expect(set.rows).toEqual([]);
    const deleted = await sql<{ id: number }>`DELETE FROM notes RETURNING id`.execute(db);
    expect(deleted.rows).toEqual([]);
    await db.destroy();
  });

  it("prepares each SQL text once per connection and closes the connection once", () => {
    const connection = new DatabaseSync(":memory:");
    const database = nodeSqliteDatabase(connection);
    const first = database.prepare("SELECT ? AS value");
    expect(database.prepare("SELECT ? AS value")).toBe(first);
    expect(first.all([42])).toEqual([{ value: 42 }]);
    expect(first.reader).toBe(true);
    expect(database.prepare("CREATE TABLE t (x)").reader).toBe(false);
    expect([...database.prepare("SELECT 1 AS a UNION ALL SELECT 2").iterate([])]).toEqual([
      { a: 1 },
      { a: 2 },
    ]);
    database.close();
    database.close();
    expect(connection.isOpen).toBe(false);
  });

  it("reads rows as arrays of column values in select order, and as objects still from the same statement", () => {
    const connection = new DatabaseSync(":memory:");
    connection.exec("CREATE TABLE t (seq INTEGER, body TEXT); INSERT INTO t VALUES (2, 'b'), (1, 'a')");
    const database = nodeSqliteDatabase(connection);
    const statement = database.prepare("SELECT body, seq FROM t WHERE seq >= ? ORDER BY seq");
    expect(statement.tuples([1])).toEqual([
      ["a", 1],
      ["b", 2],
    ]);
    expect(statement.tuples([2])).toEqual([["b", 2]]);
    expect(statement.all([1])).toEqual([
      { body: "a", seq: 1 },
      { body: "b", seq: 2 },
    ]);
    database.close();
  });

  it("passes node:sqlite errors through with their codes", async () => {
    const { db } = open();
    await db.insertInto("notes").values({ id: 1, title: "one", body: null }).execute();
    const error = await db
      .insertInto("notes")
      .values({ id: 1, title: "again", body: null })
      .execute()
      .catch((caught: unknown) => caught);
    expect((error as { errcode?: number }).errcode).toBe(1555); // SQLITE_CONSTRAINT_PRIMARYKEY
    await db.destroy();
  });
});
