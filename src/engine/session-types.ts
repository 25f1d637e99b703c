import type { ContextStats } from "../assembly/context-stats.ts";
import type { PromptSection } from "../assembly/system-prompt.ts";
import type { GovernanceEvent } from "../governance/events.ts";
import type { JsonValue } from "../model/message.ts";
import type { SessionRecord } from "../store/session-store.ts";
import type { ToolDefinition } from "./prepared-request.ts";

/** Options of `prepare`. */
export interface PrepareRequestOptions {
  /** The system prompt: a string (one identity section) or ordered sections. */
  system?: string | readonly PromptSection[];
  tools?: readonly ToolDefinition[];
  /**
   * Tokens the model is sent besides `system` and `tools` (a framework's own instructions and tool definitions that
   * it sends itself), counted in the request's fixed part. Default 0.
   */
  fixedTokens?: number;
  /** The agent loop's step cap; adds the iteration-budget section. */
  maxSteps?: number;
  signal?: AbortSignal;
  /**
   * Media the store keeps as blob references: `inline` (default) reads their data back into the request, so
   * `toOpenAIChat` and the other conversions work on a session resumed after a restart as on a live one; `ref`
   * keeps the references (for a caller that inlines them itself when it sends, or shows placeholders).
   */
  media?: "inline" | "ref";
}

/**
 * What `recover` did to the view after a provider overflow: the `emergency-recovery` event, whose `stage` is one of
 * the CowAgent seed's two emergency stages (`trimmed`, then `cleared`).
 */
export type OverflowRecovery = Extract<GovernanceEvent, { type: "emergency-recovery" }>;

/** Options of `EngineSession.addUser`. */
export interface AddUserOptions {
  /**
   * Add the message to the messages not committed yet even when they hold a reply, instead of committing those
   * first. Default false. For input that arrives together with earlier messages (a proxy's request that carries
   * an assistant message between user messages), so that all of it is committed with the reply, or none of it.
   */
  readonly keepOpenTurn?: boolean;
  /** Data kept with the message and never sent to a model (a framework's own form of it, see `Message.metadata`). */
  readonly metadata?: { readonly [key: string]: JsonValue };
}

/** A session's figures for `/context` and dashboards. */
export interface SessionStats extends ContextStats {
  readonly sessionId: string;
  readonly stored: SessionRecord | undefined;
  readonly contextWindow: number;
  readonly usable: number;
}
