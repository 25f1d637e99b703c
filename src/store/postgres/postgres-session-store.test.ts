import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresForTests, type TestPostgres } from "../../../test/store/pg-server.ts";
import { describeSessionStoreConformance } from "../conformance/describe-conformance.ts";
import type { SessionStoreOptions } from "../session-store.ts";
import { openPostgresSessionStore } from "./open-postgres-session-store.ts";
import type { PostgresSessionStore } from "./postgres-session-store.ts";
import { recordingPool } from "./recording-pool.test-helpers.ts";

let server: TestPostgres | undefined;
beforeAll(async () => {
  server = await postgresForTests();
});
afterAll(async () => {
  await server?.stop();
});

const open = (options: SessionStoreOptions, schema: string) =>
  openPostgresSessionStore({
    ...options,
    connectionString: server!.url,
    schema,
    retentionDays: 0,
    poolSize: 4,
  });

describeSessionStoreConformance(
  {
    name: "postgres",
    open: (options) => open(options, `t_${randomUUID().replaceAll("-", "")}`),
    openSecond: (store, options) => open(options, (store as PostgresSessionStore).database.schema),
    reopen: async (store, options) => {
      await store.close();
      return open(options, (store as PostgresSessionStore).database.schema);
    },
  },
  { propertyRuns: 10 },
);

describe("PostgreSQL appends", () => {
  const turn = (text: string, id?: string) => [
    { role: "user" as const, content: [{ type: "text" as const, text }], ...(id !== undefined && { id }) },
    { role: "assistant" as const, content: [{ type: "text" as const, text: `re: ${text}` }] },
  ];
  const schema = () => `t_${randomUUID().replaceAll("-", "")}`;

  it("store a turn of a session they wrote last, with its governor state, in one round trip", async () => {
    const { pool, sent } = recordingPool(server!.url);
    const store = await openPostgresSessionStore({ pool, schema: schema() });
    const first = await store.appendTurn("s1", turn("one"), { governorState: { version: 1 } });
    // Search words are indexed after the turn, in a transaction of their own (not counted here).
    await store.flushSearchIndex();
    sent.length = 0;
    const second = await store.appendTurn("s1", turn("two"), {
      expectedNextSeq: first.session.nextSeq,
      governorState: { version: 2 },
      usage: [{ usage: { input: 10, output: 5 } }],
    });
    // No BEGIN, no COMMIT: the lock, the checked totals, the rows, their queue entry and the state in one
    // autocommitted statement.
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(/^WITH locked AS/);
    expect(second.session).toEqual(await store.getSession("s1"));
    expect(second.session).toMatchObject({ messageCount: 4, turnCount: 2, nextSeq: 4 });
    expect(second.session.usage).toMatchObject({ input: 10, output: 5 });
    expect(await store.loadGovernorState("s1")).toEqual({ version: 2 });
    // A turn without a state drops the stored one, as the transaction does.
    await store.appendTurn("s1", turn("three"), { expectedNextSeq: 4 });
    expect(await store.loadGovernorState("s1")).toBeUndefined();
    expect((await store.loadMessages("s1")).map((message) => message.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    expect((await store.searchSessions("three")).map((hit) => hit.seq)).toEqual([4]);
    await store.close();
    await pool.end();
  });

  it("create a session with its first turn, its metadata and governor state in one round trip", async () => {
    const { pool, sent } = recordingPool(server!.url);
    const store = await openPostgresSessionStore({ pool, schema: schema() });
    await store.flushSearchIndex();
    sent.length = 0;
    const first = await store.appendTurn("s1", turn("okapi"), {
      expectedNextSeq: 0,
      session: { owner: "ada", agent: "claude", title: "Zoo", metadata: { b: 1, a: "x" } },
      usage: [{ usage: { input: 10, output: 5 } }],
      governorState: { version: 1 },
    });
    // No BEGIN, no read, no COMMIT: the lock, the session row, the rows, their queue entry and the state in one
    // autocommitted statement.
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(/^WITH locked AS/);
    expect(first.session).toMatchObject({
      owner: "ada",
      agent: "claude",
      title: "Zoo",
      nextSeq: 2,
      turnCount: 1,
    });
    expect(first.session).toEqual(await store.getSession("s1"));
    expect(first.session.usage).toMatchObject({ input: 10, output: 5 });
    expect(JSON.stringify(first.session.metadata)).toBe('{"b":1,"a":"x"}');
    expect(await store.loadMessages("s1")).toEqual(first.messages);
    expect(await store.loadGovernorState("s1")).toEqual({ version: 1 });
    expect((await store.searchSessions("okapi", { owner: "ada" })).map((hit) => hit.seq)).toEqual([0]);
    expect(
      (await store.listSessions({ metadata: { a: "x" } })).sessions.map((session) => session.id),
    ).toEqual(["s1"]);
    // The next turn takes the one statement of a session the store knows.
    sent.length = 0;
    await store.appendTurn("s1", turn("two"), { expectedNextSeq: 2 });
    expect(sent).toHaveLength(1);
    // Both statements are prepared on the connection (parsed and planned once, not at every turn).
    const prepared = await pool.query<{ statement: string }>(
      "SELECT statement FROM pg_prepared_statements WHERE name LIKE 'ctk\\_%' ORDER BY statement",
    );
    expect(prepared.rows.map((row) => row.statement.slice(0, 15))).toEqual([
      "WITH locked AS ",
      "WITH locked AS ",
    ]);
    await store.close();
    await pool.end();
  });

  it("store a turn of a session they did not write last in two round trips: a read, then one statement", async () => {
    const name = schema();
    const other = await openPostgresSessionStore({ connectionString: server!.url, schema: name });
    await other.appendTurn("s1", turn("one"), { session: { owner: "ada" }, governorState: { version: 1 } });
    const { pool, sent } = recordingPool(server!.url);
    const store = await openPostgresSessionStore({ pool, schema: name });
    await store.flushSearchIndex();
    sent.length = 0;
    const second = await store.appendTurn("s1", turn("two"), { expectedNextSeq: 2, expectedOwner: "ada" });
    expect(sent).toHaveLength(2);
    expect(sent[1]).toMatch(/^WITH locked AS/);
    expect(second.session).toEqual(await other.getSession("s1"));
    expect(second.session).toMatchObject({ owner: "ada", messageCount: 4, turnCount: 2, nextSeq: 4 });
    // The turn had no governor state: the stored one is dropped, as the transaction does.
    expect(await other.loadGovernorState("s1")).toBeUndefined();
    // A session not stored, with no expectation: the read finds none, and one statement creates it.
    sent.length = 0;
    const fresh = await store.appendTurn("s2", turn("three"));
    expect(sent).toHaveLength(2);
    expect(sent[1]).toMatch(/^WITH locked AS/);
    expect(fresh.session).toEqual(await other.getSession("s2"));
    expect(await other.loadMessages("s2")).toEqual(fresh.messages);
    // Expected at a seq it is not at: refused, nothing written.
    await expect(store.appendTurn("s3", turn("four"), { expectedNextSeq: 2 })).rejects.toMatchObject({
      code: "concurrent_write",
    });
    await expect(other.appendTurn("s2", turn("five"), { expectedNextSeq: 0 })).rejects.toMatchObject({
      code: "concurrent_write",
    });
    expect(await other.getSession("s3")).toBeUndefined();
    expect(await other.getSession("s2")).toEqual(fresh.session);
    await store.close();
    await other.close();
    await pool.end();
  });

  it("fall back to the transaction when another writer changed the session, losing none of its writes", async () => {
    const name = schema();
    const mine = await openPostgresSessionStore({ connectionString: server!.url, schema: name });
    const theirs = await openPostgresSessionStore({ connectionString: server!.url, schema: name });
    await mine.appendTurn("s1", turn("one"), {
      session: { owner: "ada" },
      usage: [{ usage: { input: 1, output: 0 } }],
    });
    // Another store appends and renames: what `mine` remembers of the session is stale now.
    await theirs.appendTurn("s1", turn("two"), {
      expectedNextSeq: 2,
      usage: [{ usage: { input: 2, output: 0 } }],
    });
    await theirs.renameSession("s1", "renamed");
    // A stale expectation is refused as before (by the transaction, which reads the session).
    await expect(mine.appendTurn("s1", turn("stale"), { expectedNextSeq: 2 })).rejects.toMatchObject({
      code: "concurrent_write",
    });
    const third = await mine.appendTurn("s1", turn("three"), {
      expectedNextSeq: 4,
      expectedOwner: "ada",
      usage: [{ usage: { input: 4, output: 0 } }],
    });
    expect(third.session).toMatchObject({ title: "renamed", messageCount: 6, turnCount: 3, nextSeq: 6 });
    expect(third.session.usage.input).toBe(7);
    // Known again: the next turn takes the statement, and still sees the other store's rename.
    await theirs.renameSession("s1", "again");
    const fourth = await mine.appendTurn("s1", turn("four"), { usage: [{ usage: { input: 8, output: 0 } }] });
    expect(fourth.session).toMatchObject({ title: "again", messageCount: 8, nextSeq: 8 });
    expect(fourth.session.usage.input).toBe(15);
    // A session deleted and made again by another owner is not the one remembered.
    await theirs.deleteSession("s1");
    await theirs.appendTurn("s1", turn("bob's"), { session: { owner: "bob" } });
    await expect(mine.appendTurn("s1", turn("five"), { expectedOwner: "ada" })).rejects.toMatchObject({
      code: "concurrent_write",
    });
    expect((await mine.loadMessages("s1")).map((message) => message.seq)).toEqual([0, 1]);
    await mine.close();
    await theirs.close();
  });

  it("check no session row per message row (schema 6), and a delete still takes every row with it", async () => {
    const store = await openPostgresSessionStore({ connectionString: server!.url, schema: schema() });
    const rows = async (table: string) =>
      (
        await store.database.pool.query<{ count: number }>(
          `SELECT count(*)::int AS count FROM "${store.database.schema}".${table} WHERE session_id = 's1'`,
        )
      ).rows[0]!.count;
    const keys = await store.database.pool.query(
      `SELECT conname FROM pg_constraint WHERE conrelid = '"${store.database.schema}".messages'::regclass AND contype = 'f'`,
    );
    expect(keys.rows).toEqual([]);
    await store.appendTurn("s1", turn("one"));
    await store.appendTurn("s1", turn("two"));
    await store.flushSearchIndex();
    expect([await rows("messages"), await rows("message_words")]).toEqual([4, 4]);
    expect(await store.deleteSession("s1")).toBe(true);
    expect([await rows("messages"), await rows("message_words")]).toEqual([0, 0]);
    await store.close();
  });

  it("refuse a message id stored twice in the one statement too, writing nothing", async () => {
    const store = await openPostgresSessionStore({ connectionString: server!.url, schema: schema() });
    await store.appendTurn("s1", turn("one", "m1"));
    await expect(store.appendTurn("s1", turn("two", "m1"))).rejects.toMatchObject({ code: "invalid_input" });
    expect(await store.getSession("s1")).toMatchObject({ messageCount: 2, nextSeq: 2 });
    expect(await store.appendTurn("s1", turn("two", "m2"))).toMatchObject({ session: { nextSeq: 4 } });
    await store.close();
  });
});

describe("PostgreSQL message words", () => {
  const turn = (text: string) => [
    { role: "user" as const, content: [{ type: "text" as const, text }] },
    { role: "assistant" as const, content: [{ type: "text" as const, text: `re: ${text}` }] },
  ];
  const count = async (store: PostgresSessionStore, table: string) =>
    Number(
      (
        await store.database.pool.query<{ count: string }>(
          `SELECT count(*) AS count FROM "${store.database.schema}".${table}`,
        )
      ).rows[0]!.count,
    );
  const found = async (store: PostgresSessionStore, query: string, owner?: string) =>
    (await store.searchSessions(query, owner === undefined ? {} : { owner })).map(
      (hit) => `${hit.session.id}@${hit.seq}`,
    );

  it("are queued by the turn, found by search while queued, and indexed apart with no further write", async () => {
    const store = await open({}, `t_${randomUUID().replaceAll("-", "")}`);
    await store.flushSearchIndex();
    await store.appendTurn("mine", turn("okapi"), { session: { owner: "ada" } });
    await store.appendTurn("theirs", turn("okapi"), { session: { owner: "bob" } });
    // Each turn's two rows are queued (one range) or indexed, never both nor neither, whenever the drain runs.
    const { rows } = await store.database.pool.query<{ total: number }>(
      `SELECT (SELECT 2 * count(*) FROM "${store.database.schema}".message_words_queue)
        + (SELECT count(*) FROM "${store.database.schema}".message_words) AS total`,
    );
    expect(Number(rows[0]!.total)).toBe(4);
    // Queued rows match as indexed ones do, filters included: another tenant's never show.
    expect(await found(store, "okapi", "ada")).toEqual(["mine@0"]);
    expect(await found(store, "re okapi", "bob")).toEqual(["theirs@1"]);
    await expect.poll(() => count(store, "message_words_queue"), { timeout: 10_000 }).toBe(0);
    expect(await count(store, "message_words")).toBe(4);
    expect(await found(store, "okapi", "ada")).toEqual(["mine@0"]);
    expect((await found(store, "okapi")).sort()).toEqual(["mine@0", "theirs@0"]);
    // A deleted session's words go with its rows.
    await store.deleteSession("theirs");
    expect(await count(store, "message_words")).toBe(2);
    await store.close();
  });

  it("are read by the primary key when drained or searched, never by a scan of every message", async () => {
    const schema = `t_${randomUUID().replaceAll("-", "")}`;
    const { pool, sent } = recordingPool(server!.url);
    const store = await openPostgresSessionStore({ pool, schema });
    // 20,000 stored messages of 1,000 other sessions, which the planner knows of.
    await pool.query(
      `INSERT INTO "${schema}".messages (session_id, seq, position, turn, id, role, created_at, body)
        SELECT 's' || (n / 20), n % 20, n % 20, n % 20 / 2, 'm' || n, 'user', '2026-01-01T00:00:00Z',
          json_build_object('role', 'user', 'content', json_build_array())
        FROM generate_series(0, 19999) AS n`,
    );
    await pool.query(`ANALYZE "${schema}".messages`);
    await store.appendTurn("new", turn("quokka"));
    sent.length = 0;
    expect(await found(store, "quokka")).toEqual(["new@0"]);
    await store.flushSearchIndex();
    const queueReads = new Set(
      sent.filter((text) => text.includes("message_words_queue") && /\bmessages\b/.test(text)),
    );
    // The search's read of queued rows and the drain's take of them (taken until none is left).
    expect(queueReads.size).toBe(2);
    const scanned: string[] = [];
    const visit = (node: { "Node Type"?: string; "Relation Name"?: string; Plans?: unknown[] }) => {
      if (node["Node Type"] === "Seq Scan" && node["Relation Name"] === "messages") scanned.push("messages");
      for (const child of node.Plans ?? []) visit(child as typeof node);
    };
    for (const text of queueReads) {
      // Sent after the transaction's BEGIN, as one simple query.
      const statement = text.replace(/^BEGIN[^;]*;\s*/, "");
      const { rows } = await pool.query<{ "QUERY PLAN": [{ Plan: Parameters<typeof visit>[0] }] }>(
        `EXPLAIN (FORMAT JSON) ${statement.includes("$1") ? statement.replaceAll("$1", "64") : statement}`,
      );
      visit(rows[0]!["QUERY PLAN"][0].Plan);
    }
    expect(scanned).toEqual([]);
    await store.close();
  });

  it("never deadlock a delete with a drain: both lock a session's rows by seq, however the rows are stored", async () => {
    const schema = `t_${randomUUID().replaceAll("-", "")}`;
    const store = await open({}, schema);
    await store.appendTurn("s", turn("start"));
    // 300 more rows stored in reverse seq order, so a scan of the table meets the newest first.
    await store.database.pool.query(
      `INSERT INTO "${schema}".messages (session_id, seq, position, turn, id, role, created_at, body)
        SELECT 's', n, n, n / 2, 'm' || n, 'user', '2026-01-01T00:00:00Z',
          json_build_object('role', 'user', 'content', json_build_array())
        FROM generate_series(301, 2, -1) AS n ORDER BY n DESC`,
    );
    await store.database.pool.query(`ANALYZE "${schema}".messages`);
    await store.flushSearchIndex();
    // A drain's foreign keys share-lock the rows it indexes in seq order: here the oldest of the 300, then the newest.
    const drain = new pg.Client({ connectionString: server!.url });
    await drain.connect();
    const shareLock = (seq: number) =>
      drain.query(`SELECT 1 FROM "${schema}".messages WHERE session_id = 's' AND seq = $1 FOR KEY SHARE`, [
        seq,
      ]);
    await drain.query("BEGIN");
    await shareLock(2);
    const deleting = store.deleteSession("s");
    // Asked on a connection of its own: inside the drain's transaction the activity would be a stale snapshot.
    const waiting = async () =>
      Number(
        (
          await store.database.pool.query<{ count: string }>(
            `SELECT count(*) AS count FROM pg_stat_activity
              WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid() AND strpos(query, $1) > 0`,
            [schema],
          )
        ).rows[0]!.count,
      );
    await expect.poll(waiting, { timeout: 10_000 }).toBe(1);
    // The delete waits for that row holding none after it, so the drain goes on to the newest.
    await shareLock(301);
    await drain.query("COMMIT");
    expect(await deleting).toBe(true);
    expect(await count(store, "messages")).toBe(0);
    await drain.end();
    await store.close();
  });

  it("left queued by a process killed before its drain are indexed at the next open", async () => {
    const schema = `t_${randomUUID().replaceAll("-", "")}`;
    const store = await open({}, schema);
    for (let index = 0; index < 3; index++) await store.appendTurn("a", turn(`ibis ${index}`));
    await store.close();
    // As a killed process leaves them: the ranges queued, no words (and a range whose session is gone).
    const admin = new pg.Client({ connectionString: server!.url });
    await admin.connect();
    await admin.query(`DELETE FROM "${schema}".message_words`);
    await admin.query(
      `INSERT INTO "${schema}".message_words_queue (session_id, from_seq, to_seq) VALUES ('a', 0, 3), ('a', 4, 5), ('gone', 0, 1)`,
    );
    await admin.end();
    const reopened = await open({}, schema);
    expect(await found(reopened, "ibis 1")).toEqual(["a@2"]);
    await expect.poll(() => count(reopened, "message_words_queue"), { timeout: 10_000 }).toBe(0);
    expect(await count(reopened, "message_words")).toBe(6);
    expect(await found(reopened, "ibis 2")).toEqual(["a@4"]);
    await reopened.close();
  });
});
