/**
 * The one conformance suite every `SessionStore` backend passes (as Kysely runs every test on every dialect).
 * A backend's test file calls `describeSessionStoreConformance` with a way to open fresh stores.
 */
import { afterEach, beforeEach, describe } from "vitest";
import { sequentialIds } from "../../model/ids.ts";
import { blobCases } from "./blobs-cases.ts";
import { compactSummaryCases } from "./compact-summaries-cases.ts";
import { compactionCases } from "./compaction-cases.ts";
import { TEST_PRICES, type ConformanceBackend, type ConformanceContext } from "./conformance-fixtures.ts";
import { governorStateCases } from "./governor-state-cases.ts";
import { lifecycleCases } from "./lifecycle-cases.ts";
import { mediaRestoreCases } from "./media-restore-cases.ts";
import { portabilityCases } from "./portability-cases.ts";
import { propertyCases } from "./property-cases.ts";
import { queryCases } from "./queries-cases.ts";
import { removalCases } from "./removal-cases.ts";
import { turnCases } from "./turns-cases.ts";
import { createPriceTable } from "../../pricing/model-prices.ts";
import type { SessionStore, SessionStoreOptions } from "../session-store.ts";

export type { ConformanceBackend } from "./conformance-fixtures.ts";

const START = Date.parse("2025-01-01T00:00:00.000Z");

/**
 * Declares the conformance suite for a backend.
 *
 * @example
 * describeSessionStoreConformance({ name: "memory", open: async (options) => new MemorySessionStore(options) });
 */
export function describeSessionStoreConformance(
  backend: ConformanceBackend,
  settings: { propertyRuns?: number } = {},
): void {
  describe(`SessionStore conformance: ${backend.name}`, () => {
    let time = START;
    let current: SessionStore | undefined;
    let options: SessionStoreOptions = {};
    let opened: SessionStore[] = [];
    const context: ConformanceContext = {
      backend,
      store: () => current!,
      options: () => options,
      advance: (milliseconds) => {
        time += milliseconds;
      },
      now: () => new Date(time).toISOString(),
      track: (store) => {
        opened.push(store);
        return store;
      },
      replaceStore: (store) => {
        current = context.track(store);
      },
    };

    beforeEach(async () => {
      time = START;
      options = { clock: () => new Date(time), ids: sequentialIds(), prices: createPriceTable(TEST_PRICES) };
      opened = [];
      current = context.track(await backend.open(options));
    });

    afterEach(async () => {
      for (const store of opened.reverse()) await store.close();
    });

    turnCases(context);
    compactionCases(context);
    compactSummaryCases(context);
    governorStateCases(context);
    removalCases(context);
    queryCases(context);
    lifecycleCases(context);
    blobCases(context);
    portabilityCases(context);
    mediaRestoreCases(context);
    propertyCases(context, settings.propertyRuns ?? 25);
  });
}
