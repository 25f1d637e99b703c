import { DatabaseSync } from "node:sqlite";
import { Kysely, sql } from "kysely";
import { describe, expect, it } from "vitest";
import { sqliteStoreDialect } from "../sqlite/sqlite-store-dialect.ts";
import { nodeSqliteDialect } from "./node-sqlite-dialect.ts";
import { preparedQuery } from "./prepared-query.ts";
import type { SqlTarget } from "./sql-database.ts";
import type { StoreTables } from "./store-tables.ts";

function target(): SqlTarget {
  const connection = new DatabaseSync(":memory:");
  connection.exec("CREATE TABLE blob_links (session_id TEXT, ref TEXT)");
  return {
    dialect: sqliteStoreDialect,
    builder: new Kysely<StoreTables>({ dialect: nodeSqliteDialect(connection) }),
  };
}

describe("preparedQuery", () => {
  it("compiles once per database and binds named values in the order the SQL takes them", async () => {
    let builds = 0;
    const links = preparedQuery<{ ref: string; session: string }, { ref: string }>(({ builder }, p) => {
      builds++;
      return builder
        .selectFrom("blob_links")
        .select("ref")
        .where("session_id", "=", p("session"))
        .where("ref", ">=", p("ref"));
    });
    const database = target();
    const first = links.bind(database, { ref: "b", session: "s1" });
    const second = links.bind(database, { session: "s2", ref: "a" });
    expect(builds).toBe(1);
    expect(second.sql).toBe(first.sql);
    expect(first.parameters).toEqual(["s1", "b"]);
    expect(second.parameters).toEqual(["s2", "a"]);
    await database.builder.insertInto("blob_links").values({ session_id: "s2", ref: "c" }).execute();
    expect((await database.builder.executeQuery(second)).rows).toEqual([{ ref: "c" }]);
    links.bind(target(), { ref: "a", session: "s" });
    expect(builds).toBe(2);
  });

  it("refuses a query whose parameter does not reach the SQL as a bound value", () => {
    const inlined = preparedQuery<{ ref: string }, never>(({ builder }, p) =>
      builder.selectFrom("blob_links").select(sql.lit(p("ref")).as("ref")),
    );
    expect(() => inlined.bind(target(), { ref: "x" })).toThrow(/not bound as a value/);
    const fixed = preparedQuery<{ ref: string }, never>(({ builder }, p) =>
      builder
        .selectFrom("blob_links")
        .select("ref")
        .where("ref", "=", p("ref"))
        .where("session_id", "=", "s1"),
    );
    expect(() => fixed.bind(target(), { ref: "x" })).toThrow(/fixed value/);
  });
});
