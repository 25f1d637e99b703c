import { z } from "zod";
import type { EngineMemory } from "./engine-memory.ts";
import type { Clock } from "../model/ids.ts";
import { validate } from "../model/schemas.ts";
import type { Summarizer } from "../summarize/summarizer.ts";
import type { TokenCounter } from "../tokens/token-counter.ts";
import { CoreMemoryBuilder } from "../memory/core-memory.ts";
import { DailyFileSink } from "../memory/daily-file-sink.ts";
import { newMemory } from "../memory/memory-plan.ts";
import { createMemorySearchTool } from "./memory-search-tool.ts";
import { memoryScopeSchema } from "../memory/memory-schemas.ts";
import {
  DEFAULT_MEMORY_OWNER,
  type Memory,
  type MemoryScope,
  type MemoryStore,
} from "../memory/memory-store.ts";
import { normalizeMemoryText } from "../memory/memory-text.ts";

/** Options of `createEngineMemory`. */
export interface EngineMemoryOptions {
  readonly store: MemoryStore;
  readonly counter: TokenCounter;
  /** Whose memories these are (default `DEFAULT_MEMORY_OWNER`); a server makes one per tenant. */
  readonly owner?: string;
  /** Scope of the session summaries written (default `user`). */
  readonly scope?: MemoryScope;
  /** Scopes the core memories draw from (default all). */
  readonly coreScopes?: readonly MemoryScope[];
  /** Store the summaries governance produces as `session-summary` memories (default true). */
  readonly writeSummaries?: boolean;
  /** Also append each new summary to `<dir>/memory/YYYY-MM-DD.md`. */
  readonly dailyFiles?: { readonly dir: string; readonly timeZone?: "local" | "utc" };
  /** Compresses the core memories when they do not fit their budget. */
  readonly summarizer?: Summarizer;
  readonly clock?: Clock;
}

/** The engine's memory, with the core memory builder exposed for inspection. */
export interface ContextEngineMemory extends EngineMemory {
  readonly core: CoreMemoryBuilder;
  readonly store: MemoryStore;
}

const optionsSchema = z.object({
  owner: z.string().min(1).max(200).optional(),
  scope: memoryScopeSchema.optional(),
  coreScopes: z.array(memoryScopeSchema).min(1).optional(),
  writeSummaries: z.boolean().optional(),
  dailyFiles: z
    .object({ dir: z.string().min(1) })
    .loose()
    .optional(),
});

/**
 * Long-term memory for the context engine: the summaries governance produces (turn trimming, compaction,
 * overflow recovery) become `session-summary` memories of their session, optionally logged to daily Markdown
 * files, and every session's system prompt gets the core memories of its owner — without that session's own
 * summaries, which are already in its history (no summary is injected twice). `coreMemories` returns the body
 * only: the prompt assembler writes the `# CORE MEMORIES` heading. `searchTool` (`search_memory`) lets agents
 * find what was summarised away, their own session's summaries included.
 *
 * @example
 * const memory = createEngineMemory({ store: new InMemoryMemoryStore(), counter, dailyFiles: { dir: "." } });
 * const engine = await createContextEngine({ store: sessions, memory });
 */
export function createEngineMemory(options: EngineMemoryOptions): ContextEngineMemory {
  validate(optionsSchema, options, "engine memory options");
  const { store, counter } = options;
  const owner = options.owner ?? DEFAULT_MEMORY_OWNER;
  const scope = options.scope ?? "user";
  const core = new CoreMemoryBuilder({
    store,
    counter,
    ...(options.summarizer !== undefined && { summarizer: options.summarizer }),
    ...(options.coreScopes !== undefined && { scopes: options.coreScopes }),
    ...(options.clock !== undefined && { clock: options.clock }),
  });
  const sink =
    options.dailyFiles === undefined
      ? undefined
      : new DailyFileSink({
          dir: options.dailyFiles.dir,
          ...(options.dailyFiles.timeZone !== undefined && { timeZone: options.dailyFiles.timeZone }),
          ...(options.clock !== undefined && { clock: options.clock }),
        });
  const writeSummaries = options.writeSummaries ?? true;

  return {
    core,
    store,
    searchTool: createMemorySearchTool({ store, owner }),
    async remember({ sessionId, summary, messageIds }) {
      if (normalizeMemoryText(summary) === "") return;
      const input = {
        owner,
        kind: "session-summary" as const,
        scope,
        content: summary,
        sourceSessionId: sessionId,
        metadata: {
          messageCount: messageIds.length,
          ...(messageIds.length > 0 && { firstMessageId: messageIds[0]!, lastMessageId: messageIds.at(-1)! }),
        },
      };
      let memory: Memory;
      if (writeSummaries) {
        const added = await store.add(input);
        if (added.deduplicated) return;
        memory = added.memory;
      } else {
        const now = (options.clock?.() ?? new Date()).toISOString();
        memory = newMemory(input, "unsaved", now);
      }
      await sink?.append(memory);
    },
    async coreMemories(sessionId, maxTokens) {
      return (await core.build({ owner, excludeSessionId: sessionId, maxTokens })).body;
    },
  };
}
