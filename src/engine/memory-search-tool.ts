import { z } from "zod";
import type { EngineTool } from "./engine-tool.ts";
import type { JsonValue } from "../model/message.ts";
import { validate } from "../model/schemas.ts";
import { DEFAULT_MEMORY_OWNER, type MemoryStore } from "../memory/memory-store.ts";

/** The name of the tool that searches long-term memory. */
export const MEMORY_SEARCH_TOOL_NAME = "search_memory";

/** Characters of one memory shown in a search result (summaries can be long). */
const MAX_MEMORY_CHARS = 2_000;

const searchInputSchema = z.object({
  query: z.string().trim().min(1).max(500).describe("words to look for (any of them matches)"),
  limit: z.number().int().positive().max(20).default(5).describe("how many memories to return, best first"),
});

/** Arguments of `search_memory`. */
export type MemorySearchInput = z.input<typeof searchInputSchema>;

/** The tool's JSON-schema definition, ready for any provider's tool list. */
export const memorySearchToolDefinition = {
  name: MEMORY_SEARCH_TOOL_NAME,
  description:
    "Search long-term memory: summaries of earlier conversations (also of this one's history that was trimmed " +
    "or cleared to fit the context), facts, preferences and notes. Use it when the user refers to something " +
    "you no longer see in the conversation.",
  inputSchema: z.toJSONSchema(searchInputSchema) as JsonValue,
} as const;

/**
 * Builds the `search_memory` tool over a memory store: the memories of `owner` that contain any word of the
 * query, best first, each with its kind, date and text. The engine offers it in `session.run()` when it has
 * memory (`createEngineMemory` builds it): after a context was trimmed or cleared, what was summarised to memory
 * can still be found (the CowAgent seed).
 *
 * @example
 * const search = createMemorySearchTool({ store });
 * await search.execute({ query: "database migration" }); // "2 memories match …"
 */
export function createMemorySearchTool(options: { store: MemoryStore; owner?: string }): EngineTool {
  const owner = options.owner ?? DEFAULT_MEMORY_OWNER;
  return {
    definition: memorySearchToolDefinition,
    async execute(input) {
      const { query, limit } = validate(searchInputSchema, input, `${MEMORY_SEARCH_TOOL_NAME} arguments`);
      const hits = await options.store.search(query, { owner, limit });
      if (hits.length === 0) return `no memories match "${query}"`;
      const entries = hits.map(({ memory }) => {
        const text =
          memory.content.length <= MAX_MEMORY_CHARS
            ? memory.content
            : `${memory.content.slice(0, MAX_MEMORY_CHARS)} […]`;
        return `- ${memory.kind}, ${memory.updatedAt.slice(0, 10)}: ${text}`;
      });
      return `${hits.length} ${hits.length === 1 ? "memory matches" : "memories match"} "${query}":\n${entries.join("\n")}`;
    },
  };
}
