import { describeSessionStoreConformance } from "../conformance.case.ts";
import { MemorySessionStore } from "./memory-session-store.ts";

describeSessionStoreConformance({
  name: "memory",
  open: async (options) => new MemorySessionStore(options),
});
