// Databases made by the release before the one SQL layer (fixtures made on commit eea0a67 by
// fixtures/make-legacy-fixtures.ts: a SQLite file, and the statements that code sent to PostgreSQL) open under
// the new code, upgrade, and read every session and memory back as that code read them; a database of a newer
// schema is refused and left as it was.
import { randomUUID } from "node:crypto";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CorruptStoreError, SchemaTooNewError } from "../../src/errors/index.ts";
import { openPostgresMemoryStore, openPostgresSessionStore } from "../../src/postgres.ts";
import { openSqliteMemoryStore, openSqliteSessionStore } from "../../src/sqlite.ts";
import { POSTGRES_SCHEMA_VERSION } from "../../src/store/postgres/postgres-schema.ts";
import { exportSessionsJsonl } from "../../src/store/index.ts";
import { SQLITE_SCHEMA_VERSION } from "../../src/store/sqlite/sqlite-schema.ts";
import { LEGACY_SCHEMA, readBack } from "./fixtures/make-legacy-fixtures.ts";
import { postgresForTests, type TestPostgres } from "./pg-server.ts";

const fixtures = new URL("./fixtures/", import.meta.url);
const fixture = (name: string) => new URL(name, fixtures);
const expected = (name: string) => JSON.parse(readFileSync(fixture(name), "utf8")) as unknown;

const folder = mkdtempSync(join(tmpdir(), "ctxkit-legacy-"));
let server: TestPostgres | undefined;
let admin: pg.Client | undefined;
beforeAll(async () => {
  server = await postgresForTests();
  admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
});
afterAll(async () => {
  await admin?.end();
  await server?.stop();
  rmSync(folder, { recursive: true, force: true });
});

/** A copy of the legacy SQLite file to open. */
function legacyFile(): string {
  const path = join(folder, `${randomUUID()}.db`);
  copyFileSync(fixture("legacy.db"), path);
  return path;
}

/** Names and SQL of every object in a SQLite file. */
function schemaOf(path: string): Record<string, string | null> {
  const raw = new DatabaseSync(path, { readOnly: true });
  const rows = raw.prepare("SELECT name, sql FROM sqlite_schema ORDER BY name").all() as {
    name: string;
    sql: string | null;
  }[];
  raw.close();
  return Object.fromEntries(rows.map((row) => [row.name, row.sql]));
}

const userVersion = (path: string) => {
  const raw = new DatabaseSync(path, { readOnly: true });
  const { user_version } = raw.prepare("PRAGMA user_version").get() as { user_version: number };
  raw.close();
  return user_version;
};

describe("a SQLite file made by the previous release", () => {
  it("opens, upgrades to the one schema and reads every session and memory back identically", async () => {
    const path = legacyFile();
    expect(userVersion(path)).toBe(2);
    const store = await openSqliteSessionStore({ path, retentionDays: 0 });
    const memories = await openSqliteMemoryStore({ path });
    expect(await readBack(store, memories)).toEqual(expected("legacy-sqlite.expected.json"));
    // Still writable, and its memory tables are the schema's now.
    await store.appendTurn("alpha", [
      { role: "user", content: [{ type: "text", text: "after the upgrade" }] },
    ]);
    await memories.add({ kind: "fact", content: "written after the upgrade" });
    expect((await memories.search("upgrade")).length).toBe(1);
    await memories.close();
    await store.close();
    expect(userVersion(path)).toBe(SQLITE_SCHEMA_VERSION);
    const fresh = join(folder, `${randomUUID()}.db`);
    await (await openSqliteSessionStore({ path: fresh, retentionDays: 0 })).close();
    expect(schemaOf(path)).toEqual(schemaOf(fresh));
  });

  it("is read without being upgraded when opened read-only", async () => {
    const path = legacyFile();
    const before = readFileSync(path);
    const store = await openSqliteSessionStore({ path, readOnly: true, retentionDays: 0 });
    const { export: exported } = expected("legacy-sqlite.expected.json") as { export: string };
    expect(await exportSessionsJsonl(store, ["alpha", "alpha-fork", "beta", "gamma"])).toBe(exported);
    await store.close();
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it("is refused, byte for byte unchanged, when a newer ctxkit wrote it", async () => {
    const path = legacyFile();
    const raw = new DatabaseSync(path);
    raw.exec(`PRAGMA user_version = ${SQLITE_SCHEMA_VERSION + 1}`);
    raw.close();
    const before = readFileSync(path);
    for (const open of [
      () => openSqliteSessionStore({ path, retentionDays: 0 }),
      () => openSqliteMemoryStore({ path }),
      () => openSqliteSessionStore({ path, readOnly: true, retentionDays: 0 }),
    ]) {
      const error = await open().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(SchemaTooNewError);
      expect((error as Error).message).toContain(`schema version ${SQLITE_SCHEMA_VERSION + 1}`);
    }
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it("is refused unchanged when its former memory record says a newer ctxkit wrote the memory tables", async () => {
    const path = legacyFile();
    const raw = new DatabaseSync(path);
    raw.exec("UPDATE memory_schema SET version = 2");
    raw.close();
    const before = readFileSync(path);
    const error = await openSqliteMemoryStore({ path }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SchemaTooNewError);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it("refuses a memories table ctxkit did not create", async () => {
    const path = legacyFile();
    const raw = new DatabaseSync(path);
    raw.exec(
      "DROP TABLE memories; DROP TABLE memory_words; DROP TABLE memory_versions; DROP TABLE memory_schema; CREATE TABLE memories (id INTEGER)",
    );
    raw.close();
    const error = await openSqliteMemoryStore({ path }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CorruptStoreError);
  });
});

interface Statement {
  readonly text: string;
  readonly values: unknown[];
}

/** Replays the previous release's statements into `schema`: the database that code left behind. */
async function replayLegacy(schema: string): Promise<void> {
  const statements = JSON.parse(readFileSync(fixture("legacy-postgres.json"), "utf8")) as Statement[];
  const rename = (value: string) => value.replaceAll(LEGACY_SCHEMA, schema);
  const decode = (value: unknown): unknown => {
    if (typeof value === "string") return rename(value);
    if (Array.isArray(value)) return value.map(decode);
    if (value !== null && typeof value === "object" && "$bytes" in value) {
      return Buffer.from((value as { $bytes: string }).$bytes, "base64");
    }
    return value;
  };
  for (const statement of statements) {
    await admin!.query(rename(statement.text), statement.values.map(decode));
  }
}

async function columnsOf(schema: string) {
  const { rows } = await admin!.query(
    `SELECT table_name, column_name, data_type, collation_name, is_nullable, ordinal_position
       FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, column_name`,
    [schema],
  );
  return rows.map(({ ordinal_position: _position, ...column }) => column);
}

describe("a PostgreSQL schema made by the previous release", () => {
  it("opens, upgrades to the one schema and reads every session and memory back identically", async () => {
    const schema = `legacy_${randomUUID().replaceAll("-", "")}`;
    await replayLegacy(schema);
    const recorded = async (table: string) =>
      (await admin!.query(`SELECT version FROM "${schema}".${table} ORDER BY version`)).rows.map(
        (row: { version: number }) => row.version,
      );
    expect(await recorded("ctxkit_schema")).toEqual([1, 2, 3]);
    expect(await recorded("memory_schema")).toEqual([1]);
    const pool = new pg.Pool({ connectionString: server!.url, max: 2 });
    const store = await openPostgresSessionStore({ pool, schema, retentionDays: 0 });
    const memories = await openPostgresMemoryStore({ pool, schema });
    expect(await readBack(store, memories)).toEqual(expected("legacy-postgres.expected.json"));
    expect(await recorded("ctxkit_schema")).toEqual([1, 2, 3, 4, 5, 6]);
    expect(POSTGRES_SCHEMA_VERSION).toBe(6);
    await store.appendTurn("alpha", [
      { role: "user", content: [{ type: "text", text: "after the upgrade" }] },
    ]);
    await memories.add({ kind: "fact", content: "written after the upgrade" });
    expect((await memories.search("upgrade")).length).toBe(1);
    await memories.close();
    await store.close();
    await pool.end();
    const fresh = `fresh_${randomUUID().replaceAll("-", "")}`;
    await (
      await openPostgresSessionStore({ connectionString: server!.url, schema: fresh, retentionDays: 0 })
    ).close();
    expect(await columnsOf(schema)).toEqual(await columnsOf(fresh));
  });

  it("is refused, and left as it was, when a newer ctxkit wrote it", async () => {
    const schema = `legacy_${randomUUID().replaceAll("-", "")}`;
    await replayLegacy(schema);
    await admin!.query(
      `INSERT INTO "${schema}".ctxkit_schema (version) VALUES (${POSTGRES_SCHEMA_VERSION + 1})`,
    );
    const snapshot = async () => ({
      columns: await columnsOf(schema),
      versions: (await admin!.query(`SELECT version FROM "${schema}".ctxkit_schema ORDER BY version`)).rows,
      sessions: (await admin!.query(`SELECT * FROM "${schema}".sessions ORDER BY id`)).rows,
      messages: (
        await admin!.query(`SELECT session_id, seq, body::text FROM "${schema}".messages ORDER BY 1, 2`)
      ).rows,
    });
    const before = await snapshot();
    for (const open of [
      () => openPostgresSessionStore({ connectionString: server!.url, schema, retentionDays: 0 }),
      () => openPostgresMemoryStore({ connectionString: server!.url, schema }),
    ]) {
      const error = await open().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(SchemaTooNewError);
    }
    expect(await snapshot()).toEqual(before);
  });
});
