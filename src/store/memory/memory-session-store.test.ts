// Through the public entry, as a third-party backend would use it.
import { describeSessionStoreConformance } from "../../conformance.ts";
import { MemorySessionStore } from "./memory-session-store.ts";

describeSessionStoreConformance({
  name: "memory",
  open: async (options) => new MemorySessionStore(options),
});
