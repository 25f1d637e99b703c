/** Fields every governance event carries. */
interface EventBase {
  /** Payload tokens before and after the action. */
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  /** Ids of the history messages the action changed, removed or replaced. */
  readonly messageIds: readonly string[];
}

/**
 * Everything governance does, as a typed event (names are noun-verb). Subscribe with `onEvent`; every prepared
 * request also lists its events.
 */
export type GovernanceEvent =
  | (EventBase & { readonly type: "reasoning-stripped" })
  | (EventBase & { readonly type: "binaries-replaced" })
  | (EventBase & { readonly type: "compact-summaries-used" })
  | (EventBase & { readonly type: "tool-output-truncated" })
  | (EventBase & { readonly type: "tool-inputs-elided" })
  | (EventBase & { readonly type: "tool-output-offloaded"; readonly refs: readonly string[] })
  | (EventBase & { readonly type: "tool-output-capped" })
  | (EventBase & { readonly type: "turns-trimmed"; readonly turns: number; readonly summary: string })
  | (EventBase & { readonly type: "small-history-compressed" })
  | (EventBase & { readonly type: "compaction-start"; readonly reason: string })
  | (EventBase & {
      readonly type: "compaction-end";
      readonly summarizer: string;
      readonly summaryTokens: number;
      readonly durationMs: number;
    })
  | (EventBase & { readonly type: "compaction-rolled-back"; readonly reason: string })
  | (EventBase & {
      readonly type: "summarizer-failed";
      /** The summarizer's error message (or that it answered with nothing). */
      readonly reason: string;
      /** What stood in for the summary: a marker naming what was removed, or nothing (the step was skipped). */
      readonly fallback: "marker" | "none";
    })
  | (EventBase & { readonly type: "checkpoint-skipped"; readonly reason: string })
  | (EventBase & { readonly type: "overflow-prevented"; readonly windowTokens: number })
  | (EventBase & { readonly type: "budget-exit-notice" })
  | (EventBase & {
      readonly type: "orphans-repaired";
      readonly synthesized: number;
      readonly dropped: number;
    })
  | (EventBase & { readonly type: "loop-detected"; readonly pattern: string })
  | (EventBase & { readonly type: "emergency-recovery"; readonly stage: "trimmed" | "cleared" });

/** The type names of every governance event. */
export type GovernanceEventType = GovernanceEvent["type"];

/** Receives governance events as they happen. */
export type GovernanceEventListener = (event: GovernanceEvent) => void;
