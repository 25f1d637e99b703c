import { InMemoryMemoryStore } from "./in-memory-memory-store.ts";
import { describeMemoryStoreConformance } from "./memory-store-conformance.test-helpers.ts";

describeMemoryStoreConformance("in-memory", { create: async (options) => new InMemoryMemoryStore(options) });
