/**
 * Long-term memory: the `MemoryStore` contract and its in-process store, de-duplication, core memories within a
 * token budget, daily Markdown memory files, and the engine's memory. Core-safe: the SQLite and PostgreSQL
 * backends live in `src/memory/sqlite` and `src/memory/postgres`.
 */
export {
  DEFAULT_MEMORY_OWNER,
  MEMORY_KINDS,
  MEMORY_SCOPES,
  type AddMemoryResult,
  type Memory,
  type MemoryChanges,
  type MemoryFilter,
  type MemoryInput,
  type MemoryKind,
  type MemoryMetadata,
  type MemoryScope,
  type MemorySearchHit,
  type MemoryStore,
  type MemoryStoreOptions,
  type OwnerOption,
} from "./memory-store.ts";
export {
  DEFAULT_LIST_LIMIT,
  DEFAULT_SEARCH_LIMIT,
  MAX_MEMORY_LENGTH,
  memoryChangesSchema,
  memoryFilterSchema,
  memoryInputSchema,
  memoryKindSchema,
  memoryScopeSchema,
} from "./memory-schemas.ts";
export { NEAR_DUPLICATE_SIMILARITY, isNearDuplicate } from "./memory-text.ts";
export { InMemoryMemoryStore } from "./in-memory-memory-store.ts";
export {
  CORE_MEMORIES_HEADING,
  CORE_MEMORY_KIND_ORDER,
  coreMemoriesBlock,
  memoryEntry,
  renderMemories,
} from "./core-memory-text.ts";
export {
  CoreMemoryBuilder,
  type CoreMemories,
  type CoreMemoryOptions,
  type CoreMemoryRequest,
} from "./core-memory.ts";
export { DailyFileSink, type DailyFileSinkOptions } from "./daily-file-sink.ts";
