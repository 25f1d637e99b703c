import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { bundled } from "../../../test/support/bundled.ts";
import { describeSessionStoreConformance } from "../conformance/describe-conformance.ts";
import { openSqliteSessionStore } from "./open-sqlite-session-store.ts";
import type { SqliteSessionStore } from "./sqlite-session-store.ts";

const folder = mkdtempSync(join(tmpdir(), "ctxkit-sqlite-"));
let files = 0;
afterAll(() => rmSync(folder, { recursive: true, force: true }));

// The writer thread runs the bundle of its script the test run made (the `writerScript` option, as an application
// that bundles ctxkit sets it): the same code, started in a fraction of the CPU, for each of the ~40 stores this
// suite opens. The default script beside the module is what sqlite-group-commit.test.ts opens.
const writerScript = bundled("sqlite-writer-worker");

describeSessionStoreConformance({
  name: "sqlite (worker writer)",
  open: (options) =>
    openSqliteSessionStore({
      ...options,
      path: join(folder, `store-${++files}.db`),
      retentionDays: 0,
      writer: "worker",
      writerScript,
    }),
  openSecond: (store, options) =>
    openSqliteSessionStore({
      ...options,
      path: (store as SqliteSessionStore).location,
      retentionDays: 0,
      writer: "worker",
      writerScript,
    }),
  reopen: async (store, options) => {
    await store.close();
    return openSqliteSessionStore({
      ...options,
      path: (store as SqliteSessionStore).location,
      retentionDays: 0,
      writer: "worker",
      writerScript,
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
