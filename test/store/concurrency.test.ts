import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionStore } from "../../src/store/index.ts";
import { bundled } from "../support/bundled.ts";
import { startWorker, wholeTurnTags, type Child } from "./crash-harness.ts";
import { postgresForTests, type TestPostgres } from "./pg-server.ts";
import { openStore, type StoreSpec } from "./workers/worker-store.ts";

const workerPath = bundled("concurrent-worker");
const WORKERS = 4;

/** Waits until the child printed one of `wanted` and returns it; a worker error or exit fails the wait. */
function waitForLine(child: Child, ...wanted: string[]): Promise<string> {
  return child.until((lines) => {
    const error = lines.find((line) => line.startsWith("error"));
    if (error !== undefined) throw new Error(`worker failed: ${error}`);
    return wanted.find((line) => lines.includes(line));
  });
}

function concurrencyCases(name: string, specOf: () => StoreSpec): void {
  describe(`${name}: several processes writing at once`, () => {
    it("loses and interleaves nothing, on separate sessions and on one shared session", async () => {
      const spec = specOf();
      const children = Array.from({ length: WORKERS }, (_, worker) =>
        startWorker(workerPath, { spec, worker, phase: "free", count: 12 }),
      );
      for (const child of children) child.process.stdin!.end();
      await Promise.all(children.map((child) => waitForLine(child, "done")));
      const lines = children.flatMap((child) => child.lines);
      expect(lines.filter((line) => line.startsWith("error"))).toEqual([]);
      const store: SessionStore = await openStore(spec);
      for (let worker = 0; worker < WORKERS; worker++) {
        expect(await wholeTurnTags(store, `own-${worker}`)).toEqual(
          Array.from({ length: 12 }, (_, index) => `w${worker}-${index}`),
        );
      }
      const shared = await wholeTurnTags(store, "shared");
      const acknowledged = lines
        .filter((line) => line.startsWith("ack shared "))
        .map((line) => line.slice(11));
      expect(acknowledged).toHaveLength(WORKERS * 12);
      expect([...shared].sort()).toEqual([...acknowledged].sort());
      for (let worker = 0; worker < WORKERS; worker++) {
        const own = shared.filter((tag) => tag.startsWith(`w${worker}-`));
        expect(own).toEqual(Array.from({ length: 12 }, (_, index) => `w${worker}-${index}`));
      }
      await store.close();
    });

    it("lets exactly one of the writers that read the same seq append; the others get ConcurrentWriteError", async () => {
      const spec = specOf();
      const rounds = 8;
      const children = Array.from({ length: WORKERS }, (_, worker) =>
        startWorker(workerPath, { spec, worker, phase: "duel", count: rounds }),
      );
      for (let round = 0; round < rounds; round++) {
        await Promise.all(children.map((child) => waitForLine(child, `read ${round}`)));
        for (const child of children) child.process.stdin!.write("go\n");
        const outcomes = await Promise.all(
          children.map((child) => waitForLine(child, `ok ${round}`, `conflict ${round}`)),
        );
        expect(outcomes.filter((outcome) => outcome === `ok ${round}`)).toHaveLength(1);
        expect(outcomes.filter((outcome) => outcome === `conflict ${round}`)).toHaveLength(WORKERS - 1);
      }
      for (const child of children) child.process.stdin!.end();
      await Promise.all(children.map((child) => waitForLine(child, "done")));
      const store = await openStore(spec);
      const tags = await wholeTurnTags(store, "duel");
      expect(tags).toHaveLength(rounds);
      expect(tags.map((tag) => tag.replace(/^w\d+/, ""))).toEqual(
        Array.from({ length: rounds }, (_, round) => `r${round}`),
      );
      await store.close();
    });
  });
}

const folder = mkdtempSync(join(tmpdir(), "ctxkit-concurrency-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
let databases = 0;
concurrencyCases("SQLite", () => ({ backend: "sqlite", path: join(folder, `shared-${++databases}.db`) }));

let server: TestPostgres | undefined;
beforeAll(async () => {
  server = await postgresForTests();
});
afterAll(async () => {
  await server?.stop();
});
concurrencyCases("PostgreSQL", () => ({
  backend: "postgres",
  url: server!.url,
  schema: `concurrency_${randomUUID().replaceAll("-", "")}`,
}));
