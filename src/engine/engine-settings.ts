import type { GovernanceEvent } from "../governance/events.ts";
import type { GovernancePipeline } from "../governance/pipeline.ts";
import type { Clock, IdGenerator } from "../model/ids.ts";
import type { LoadStrategy, SessionInit, SessionStore } from "../store/session-store.ts";
import type { Summarizer } from "../summarize/summarizer.ts";
import type { TokenCounter } from "../tokens/token-counter.ts";
import type { EngineMemory } from "./engine-memory.ts";

/** The engine's resolved settings, shared by its sessions. */
export interface EngineSettings {
  readonly store: SessionStore;
  readonly contextWindow: number;
  readonly reservedOutputTokens: number;
  readonly counter: TokenCounter;
  readonly summarizer: Summarizer;
  /** Summarizer for user-initiated compaction (the primary model when one is configured). */
  readonly compactSummarizer: Summarizer;
  /** What governs every session: processors and governor settings. */
  readonly pipeline: GovernancePipeline;
  readonly memory: EngineMemory | undefined;
  readonly coreMemoryTokens: number;
  readonly restore: LoadStrategy | undefined;
  readonly sessionInit: SessionInit | undefined;
  /** Whether sessions offer `recall_tool_output` (see `ContextEngineOptions.recall`). */
  readonly recall: boolean;
  readonly onEvent: ((event: GovernanceEvent, sessionId: string) => void) | undefined;
  readonly ids: IdGenerator;
  readonly clock: Clock;
}
