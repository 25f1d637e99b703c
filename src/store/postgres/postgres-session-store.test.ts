import { randomUUID } from "node:crypto";
import { afterAll, beforeAll } from "vitest";
import { postgresForTests, type TestPostgres } from "../../../test/store/pg-server.ts";
import { describeSessionStoreConformance } from "../conformance/describe-conformance.ts";
import type { SessionStoreOptions } from "../session-store.ts";
import { openPostgresSessionStore } from "./open-postgres-session-store.ts";
import type { PostgresSessionStore } from "./postgres-session-store.ts";

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
