import { DatabaseSync } from "node:sqlite";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { SqliteDatabase } from "./sqlite-database.ts";

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("SqliteDatabase", () => {
  it("runs an autocommitted query at once, or after an open transaction ends: never inside it", async () => {
    const database = new SqliteDatabase(new DatabaseSync(":memory:"), ":memory:", { integrityCheck: false });
    await database.queries.run(sql`CREATE TABLE notes (text TEXT)`);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const writing = database.write(async (queries) => {
      await queries.run(sql`INSERT INTO notes VALUES (${"written in the transaction"})`);
      await gate;
      throw new Error("rolled back");
    });
    await tick();
    expect(database.connection.isTransaction).toBe(true);
    let answered = false;
    const reading = database.queries.all<{ text: string }>(sql`SELECT text FROM notes`).finally(() => {
      answered = true;
    });
    await tick();
    // It would have seen the uncommitted row, and been rolled back with it.
    expect(answered).toBe(false);
    release();
    await expect(writing).rejects.toThrow("rolled back");
    expect(await reading).toEqual([]);

    await database.queries.run(sql`INSERT INTO notes VALUES (${"autocommitted"})`);
    expect(database.connection.isTransaction).toBe(false);
    expect(await database.queries.all(sql`SELECT text FROM notes`)).toEqual([{ text: "autocommitted" }]);
    await database.close();
  });
});
