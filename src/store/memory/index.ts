export { MemorySessionStore } from "./memory-session-store.ts";
export { MemoryBlobStore } from "./memory-blob-store.ts";
