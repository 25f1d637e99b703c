// A multi-session import is all or nothing (issue 15: a failure part-way left the first sessions committed,
// said nothing about them, and a re-run was refused as "already exists"). The failures are real: SQLite's
// page limit fills the "disk" part-way; on PostgreSQL a trigger refuses a session in the middle of the file.
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreError } from "../../src/errors/index.ts";
import { importTranscriptSessions } from "../../src/store/jsonl/index.ts";
import { openPostgresSessionStore } from "../../src/store/postgres/index.ts";
import { openSqliteSessionStore } from "../../src/store/sqlite/index.ts";
import { transcriptPath } from "../support/transcripts.ts";
import { postgresForTests, type TestPostgres } from "./pg-server.ts";

const tauBench = transcriptPath("tau-bench/gpt-4o-airline.json"); // 200 conversations
const folder = mkdtempSync(join(tmpdir(), "ctxkit-atomic-import-"));
let server: TestPostgres | undefined;
beforeAll(async () => {
  server = await postgresForTests();
});
afterAll(async () => {
  await server?.stop();
  rmSync(folder, { recursive: true, force: true });
});

describe("a multi-session import that fails part-way", () => {
  it("SQLite: a full disk leaves no session of the file, and the same import then succeeds", async () => {
    const path = join(folder, `${randomUUID()}.db`);
    const empty = await openSqliteSessionStore({ path });
    const pages = (empty.database.connection.prepare("PRAGMA page_count").get() as
      { page_count: number } | undefined)!.page_count;
    await empty.close();
    // The whole file takes about 1,800 pages: the limit is reached a quarter of the way through.
    const full = await openSqliteSessionStore({ path, pragmas: { max_page_count: pages + 450 } });
    const error = await importTranscriptSessions(full, tauBench).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toMatch(/full/);
    expect((await full.listSessions()).sessions).toEqual([]);
    await full.close();

    const roomy = await openSqliteSessionStore({ path });
    expect((await importTranscriptSessions(roomy, tauBench)).sessions).toHaveLength(200);
    await roomy.close();
  });

  it("PostgreSQL: a session refused in the middle leaves none of the file", async () => {
    const schema = `atomic_${randomUUID().replaceAll("-", "")}`;
    const store = await openPostgresSessionStore({ connectionString: server!.url, schema, poolSize: 2 });
    const client = new pg.Client({ connectionString: server!.url });
    await client.connect();
    await client.query(`CREATE FUNCTION "${schema}".refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused by the test'; END $$`);
    await client.query(`CREATE TRIGGER refuse BEFORE INSERT ON "${schema}".sessions FOR EACH ROW
      WHEN (NEW.id = 'gpt-4o-airline:task-40-trial-0') EXECUTE FUNCTION "${schema}".refuse()`);
    try {
      await expect(importTranscriptSessions(store, tauBench)).rejects.toThrow(/refused by the test/);
      expect((await store.listSessions()).sessions).toEqual([]);
      await client.query(`DROP TRIGGER refuse ON "${schema}".sessions`);
      expect((await importTranscriptSessions(store, tauBench)).sessions).toHaveLength(200);
    } finally {
      await client.end();
      await store.close();
    }
  });
});
