import type { EngineTool } from "./engine-tool.ts";

/**
 * What the engine needs from long-term memory: a place for the summaries governance produces, and the
 * `# CORE MEMORIES` text for a session's system prompt. `src/memory` implements it over the memory stores.
 */
export interface EngineMemory {
  /** Stores a summary of history governance dropped or compacted (a `session-summary` memory). */
  remember(entry: { sessionId: string; summary: string; messageIds: readonly string[] }): Promise<void>;
  /**
   * The core-memories text for `sessionId`'s system prompt, within `maxTokens`. It must leave out that
   * session's own summaries: they are already in its history (no summary is injected twice).
   */
  coreMemories(sessionId: string, maxTokens: number): Promise<string>;
  /** A tool that searches these memories; `session.run()` offers it to the model. */
  readonly searchTool?: EngineTool;
}
