import type { Clock, IdGenerator } from "../model/ids.ts";
import type { Message } from "../model/message.ts";
import type { Summarizer } from "../summarize/summarizer.ts";
import type { TokenCounter } from "../tokens/token-counter.ts";
import type { GovernanceEvent, GovernanceEventListener } from "./events.ts";
import type { LoopDetection } from "./loop-detector.ts";
import type { OffloadStore } from "./offload-store.ts";
import type { GovernancePipeline } from "./pipeline.ts";
import type { MemorySink, WindowBudget } from "./processor.ts";

/** Options of `createGovernor`. */
export interface GovernorOptions {
  /** The model's context window, in tokens. */
  contextWindow: number;
  /** The model's maximum output; the reserve is min(20k, maxOutputTokens, window / 4). Default 8,192. */
  maxOutputTokens?: number;
  /** Overrides the reserved output tokens outright. */
  reservedOutputTokens?: number;
  counter: TokenCounter;
  summarizer: Summarizer;
  /**
   * What to run: processors that declare when they run, and the governor's settings (`createPipeline`, `preset`).
   * Default: `preset("default")`.
   */
  pipeline?: GovernancePipeline;
  /** Where offloaded and truncated outputs are kept. Default: in memory. */
  offloadStore?: OffloadStore;
  /**
   * Whether the agent can call `recall_tool_output` (default true: `session.run()` offers it, and so can your own
   * loop with `createRecallTool`). The notices of offloaded outputs and shortened arguments tell the agent to call
   * it; without it they only say the full text is kept outside the conversation (the stateful proxy, whose clients
   * run their own tools).
   */
  recall?: boolean;
  memorySink?: MemorySink;
  onEvent?: GovernanceEventListener;
  ids?: IdGenerator;
  clock?: Clock;
}

/**
 * A history the governor reads without copying it: its length, a message by index (negative from the end) and
 * the messages from an index on. `ConversationSnapshot` is one.
 */
export interface HistoryReader {
  readonly length: number;
  at(index: number): Message | undefined;
  tail(start: number): readonly Message[];
}

/** Per-request options of `prepare`. */
export interface PrepareOptions {
  /** Tokens of the payload outside the messages (system prompt, tool definitions). */
  fixedTokens?: number;
  signal?: AbortSignal;
}

/** Token figures of a prepared request. */
export interface RequestTokens extends WindowBudget {
  readonly fixed: number;
  readonly messages: number;
  /** `fixed + messages`: what the payload is expected to cost, by the local counter. */
  readonly total: number;
  /**
   * The total anchored on the provider's last reported usage (its count of the previous request plus the
   * estimated change since); present once a usage was observed. Governance decisions use it when present.
   */
  readonly anchoredTotal?: number;
}

/** The outcome of `prepare`: the governed messages to send, and what governance did. */
export interface GovernedRequest {
  /** The view to send, in order (orphan-repaired; may end with a budget notice). */
  readonly messages: readonly Message[];
  readonly events: readonly GovernanceEvent[];
  readonly tokens: RequestTokens;
  /** True when this request rewrote earlier history (the prompt cache restarts after the first change). */
  readonly checkpoint: boolean;
  /**
   * Indices in `messages` where payload builders put cache breakpoints besides the newest messages', oldest first:
   * the view's cache anchor — the end of the prefix the next checkpoint will leave as it is (see `cacheAnchor`),
   * so a rewrite of what follows still reads the settled history from the cache — and, when this request rewrote
   * history after the previous request's anchor, that one too: it is the prefix the provider holds now.
   */
  readonly cacheAnchors?: readonly number[];
  readonly loop?: LoopDetection;
}

/** What `recover` did after a provider overflow error. */
export interface RecoveryOutcome {
  /** Whether the caller should prepare and send the request again. */
  readonly retry: boolean;
  /** True when the context had to be cleared (only the current instruction remains). */
  readonly cleared: boolean;
  /** What the recovery did (also told to `onEvent`); absent when the error was no overflow. */
  readonly event?: Extract<GovernanceEvent, { readonly type: "emergency-recovery" }>;
}
