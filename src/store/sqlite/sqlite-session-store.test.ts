import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { describeSessionStoreConformance } from "../conformance/describe-conformance.ts";
import { openSqliteSessionStore } from "./open-sqlite-session-store.ts";
import type { SqliteSessionStore } from "./sqlite-session-store.ts";

const folder = mkdtempSync(join(tmpdir(), "ctxkit-sqlite-"));
let files = 0;
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describeSessionStoreConformance({
  name: "sqlite (worker writer)",
  open: (options) =>
    openSqliteSessionStore({
      ...options,
      path: join(folder, `store-${++files}.db`),
      retentionDays: 0,
      writer: "worker",
    }),
  openSecond: (store, options) =>
    openSqliteSessionStore({
      ...options,
      path: (store as SqliteSessionStore).location,
      retentionDays: 0,
      writer: "worker",
    }),
  reopen: async (store, options) => {
    await store.close();
    return openSqliteSessionStore({
      ...options,
      path: (store as SqliteSessionStore).location,
      retentionDays: 0,
      writer: "worker",
    });
  },
});

describeSessionStoreConformance({
  name: "sqlite (inline writer)",
  open: (options) =>
    openSqliteSessionStore({
      ...options,
      path: join(folder, `store-${++files}.db`),
      retentionDays: 0,
      writer: "inline",
    }),
  openSecond: (store, options) =>
    openSqliteSessionStore({
      ...options,
      path: (store as SqliteSessionStore).location,
      retentionDays: 0,
      writer: "inline",
    }),
  reopen: async (store, options) => {
    await store.close();
    return openSqliteSessionStore({
      ...options,
      path: (store as SqliteSessionStore).location,
      retentionDays: 0,
      writer: "inline",
    });
  },
});
