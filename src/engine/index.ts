export * from "./context-engine.ts";
export * from "./engine-session.ts";
export * from "./session-turn.ts";
export * from "./engine-memory.ts";
export * from "./engine-tool.ts";
export * from "./prepared-request.ts";
export * from "./agent-run.ts";
export {
  createEngineMemory,
  type ContextEngineMemory,
  type EngineMemoryOptions,
} from "./create-engine-memory.ts";
export {
  MEMORY_SEARCH_TOOL_NAME,
  createMemorySearchTool,
  memorySearchToolDefinition,
  type MemorySearchInput,
} from "./memory-search-tool.ts";
