import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SchemaTooNewError } from "../../src/errors/index.ts";
import { exportSessionsJsonl } from "../../src/store/index.ts";
import { openPostgresSessionStore, POSTGRES_SCHEMA_VERSION } from "../../src/store/postgres/index.ts";
import { postgresForTests, type TestPostgres } from "./pg-server.ts";

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
});

const turn = (text: string) => [
  { role: "user" as const, content: [{ type: "text" as const, text }] },
  { role: "assistant" as const, content: [{ type: "text" as const, text: `re: ${text}` }] },
];

describe("PostgreSQL schema versions", () => {
  it("migrates a version 1 schema forward, keeping its sessions, and keeps metadata key order from then on", async () => {
    const schema = `migrate_${randomUUID().replaceAll("-", "")}`;
    const open = () => openPostgresSessionStore({ connectionString: server!.url, schema, retentionDays: 0 });
    const first = await open();
    await first.appendTurn("old", turn("before"), { session: { metadata: { zeta: 1, alpha: 2 } } });
    await first.close();
    // Back to the version 1 layout, data included.
    await admin!.query(`ALTER TABLE "${schema}".sessions DROP COLUMN metadata_json`);
    await admin!.query(`DROP TABLE "${schema}".governor_states`);
    await admin!.query(`DROP TABLE "${schema}".memories, "${schema}".memory_versions`);
    // Version 1 kept each message's words in its row.
    const table = (name: string) => `"${schema}".${name}`;
    await admin!.query(`ALTER TABLE ${table("messages")} ADD COLUMN words tsvector NOT NULL DEFAULT ''`);
    await admin!.query(
      `UPDATE ${table("messages")} m SET words = w.words FROM ${table("message_words")} w
        WHERE w.session_id = m.session_id AND w.seq = m.seq`,
    );
    await admin!.query(`ALTER TABLE ${table("messages")} ALTER COLUMN words DROP DEFAULT`);
    await admin!.query(`CREATE INDEX messages_by_words ON ${table("messages")} USING gin (words)`);
    await admin!.query(`DROP TABLE ${table("message_words")}, ${table("message_words_queue")}`);
    await admin!.query(`DELETE FROM "${schema}".ctxkit_schema WHERE version > 1`);

    const store = await open();
    const versions = await admin!.query<{ version: number }>(
      `SELECT version FROM "${schema}".ctxkit_schema ORDER BY version`,
    );
    expect(versions.rows.map((row) => row.version)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(POSTGRES_SCHEMA_VERSION).toBe(6);
    // The words stored in the rows moved to the index table.
    expect((await store.searchSessions("before")).map((hit) => `${hit.session.id}@${hit.seq}`)).toEqual([
      "old@0",
    ]);
    const moved = await admin!.query(`SELECT count(*)::int AS count FROM ${table("message_words")}`);
    expect(moved.rows[0]).toEqual({ count: 2 });
    expect((await store.getSession("old"))?.metadata).toEqual({ zeta: 1, alpha: 2 });
    expect((await store.loadMessages("old")).map((message) => message.content)).toEqual(
      turn("before").map((message) => message.content),
    );
    await store.appendTurn("new", turn("after"), { session: { metadata: { zeta: 1, alpha: 2 } } });
    expect(await exportSessionsJsonl(store, ["new"])).toContain('"metadata":{"zeta":1,"alpha":2}');
    expect(
      (await store.listSessions({ metadata: { alpha: 2 } })).sessions.map((session) => session.id).sort(),
    ).toEqual(["new", "old"]);
    await store.close();
  });

  it("refuses a schema written by a newer ctxkit with a clear error and changes nothing", async () => {
    const schema = `newer_${randomUUID().replaceAll("-", "")}`;
    const open = () => openPostgresSessionStore({ connectionString: server!.url, schema, retentionDays: 0 });
    const first = await open();
    await first.appendTurn("kept", turn("hello"));
    await first.close();
    await admin!.query(`INSERT INTO "${schema}".ctxkit_schema (version) VALUES (99)`);
    const error = await open().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SchemaTooNewError);
    expect((error as Error).message).toMatch(/99/);
    await admin!.query(`DELETE FROM "${schema}".ctxkit_schema WHERE version = 99`);
    const again = await open();
    expect((await again.loadMessages("kept")).length).toBe(2);
    await again.close();
  });
});
