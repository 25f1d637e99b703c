import { randomUUID } from "node:crypto";
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
  it("store a turn with its governor state in as many round trips as a plain insert transaction: 3", async () => {
    const { pool, sent } = recordingPool(server!.url);
    const store = await openPostgresSessionStore({ pool, schema: `t_${randomUUID().replaceAll("-", "")}` });
    const turn = (text: string) => [
      { role: "user" as const, content: [{ type: "text" as const, text }] },
      { role: "assistant" as const, content: [{ type: "text" as const, text: `re: ${text}` }] },
    ];
    const first = await store.appendTurn("s1", turn("one"), { governorState: { version: 1 } });
    sent.length = 0;
    await store.appendTurn("s1", turn("two"), {
      expectedNextSeq: first.session.nextSeq,
      governorState: { version: 2 },
    });
    // BEGIN, the lock and the session read; the rows and the session's totals; the state upsert with COMMIT.
    expect(sent).toHaveLength(3);
    expect(sent[2]).toMatch(/governor_states.*; COMMIT$/s);
    expect(await store.loadGovernorState("s1")).toEqual({ version: 2 });
    await store.close();
    await pool.end();
  });
});
