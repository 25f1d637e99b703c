import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresSessionStore } from "../../src/store/postgres/index.ts";
import {
  crashRounds,
  expectCompleteRestores,
  expectCompleteTurns,
  expectSearchableTurns,
} from "./crash-harness.ts";
import { postgresForTests, type TestPostgres } from "./pg-server.ts";

let server: TestPostgres | undefined;
beforeAll(async () => {
  server = await postgresForTests();
});
afterAll(async () => {
  await server?.stop();
});

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

describe("PostgreSQL store with connections cut and writers killed", () => {
  it("keeps every acknowledged turn and no partial one", async () => {
    const schema = `crash_${randomUUID().replaceAll("-", "")}`;
    // Each worker names its connections, so a cut hits that worker only (the next one is already starting).
    const specOf = (worker: number) => {
      const url = new URL(server!.url);
      url.searchParams.set("application_name", `${schema.slice(-12)}_${worker}`);
      return { backend: "postgres" as const, url: url.toString(), schema };
    };
    const admin = new pg.Client({ connectionString: server!.url });
    await admin.connect();
    let terminated = 0;
    // Cuts the worker's connections on the server side (as a network failure or a server restart would).
    const cutConnections = async (worker: number) => {
      for (let attempt = 0; attempt < 3; attempt++) {
        await sleep(Math.random() * 60);
        const result = await admin.query(
          "SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE application_name = $1",
          [`${schema.slice(-12)}_${worker}`],
        );
        terminated += result.rows.filter((row: { done: boolean }) => row.done).length;
      }
    };
    const rounds = Array.from({ length: 50 }, (_, worker) => ({
      spec: specOf(worker),
      sessionId: "crash",
      mode: worker % 5 === 4 ? ("restore" as const) : ("append" as const),
      worker,
    }));
    // Ranges of message rows still queued for their words.
    const backlog = async () =>
      Number(
        (
          await admin.query<{ count: string }>(
            `SELECT count(*) AS count FROM "${schema}".message_words_queue`,
          )
        ).rows[0]!.count,
      );
    let round = 0;
    // How often a kill left rows queued (killed between a commit and its drain).
    let leftWaiting = 0;
    // Every other round cuts the connections before the kill; the others only kill the writer.
    const { acknowledged, kills } = await crashRounds(
      rounds,
      () => 200,
      async (argument) => {
        if (round++ % 2 === 1) await cutConnections(argument.worker);
      },
      async () => {
        if ((await backlog()) > 0) leftWaiting++;
      },
    );
    expect(leftWaiting).toBeGreaterThan(0);
    expect(kills).toBe(50);
    expect(terminated).toBeGreaterThan(0);
    const store = await openPostgresSessionStore({ connectionString: server!.url, schema, retentionDays: 0 });
    const appended = acknowledged.filter((tag) => !tag.startsWith("restored-"));
    await expectSearchableTurns(store, backlog, [{ sessionId: "crash", acknowledged: appended }]);
    await admin.end();
    const turns = await expectCompleteTurns(store, "crash", appended);
    expect(turns).toBeGreaterThan(0);
    await expectCompleteRestores(
      store,
      acknowledged.filter((tag) => tag.startsWith("restored-")),
      122,
    );
    await store.close();
  }, 180_000);
});
