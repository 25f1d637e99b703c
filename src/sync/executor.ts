import type { Message } from "../model/message.ts";
import type { ConversationToolCall } from "./protocol.ts";
import type { ToolCallRecord } from "./tool-summary.ts";

/** What an executor gets for one intent. */
export interface ExecutorRun {
  readonly agent: string;
  /** The executor session to continue; `undefined` starts a new one. */
  readonly executorSessionId: string | undefined;
  /** True when this is the session's first use since it was restored (reconnect, server restart). */
  readonly restored: boolean;
  /** The one message to give the executor: `[Prior conversation for context] … [Current request] …`. */
  readonly message: string;
  /** Just the unseen conversation, rendered (empty when there is none). */
  readonly context: string;
  readonly signal: AbortSignal;
  /** Streams progress text to the client (`agent_delta`). */
  readonly emit: (delta: string) => void;
}

/** An executor's finished run. */
export interface AgentResult {
  readonly answer: string;
  /** The tools it called, for the conversation's tool-summary prefix. */
  readonly toolSummary: readonly ToolCallRecord[];
  /**
   * Its own session id, to continue the session next time. Report a different id than `run.executorSessionId`
   * only when the run started a new session: the ledger cannot tell what that session missed. To have a lost
   * session detected before the run (which then receives the whole window), give the hub
   * `restoreExecutorSession`.
   */
  readonly sessionId: string;
}

/**
 * An execution agent: runs `intent` autonomously in its own session and reports the answer and the tools used.
 *
 * @example
 * const desktop: Executor = async (intent, run) => {
 *   const session = await sessions.openOrCreate(run.executorSessionId);
 *   const answer = await session.run(run.message, { signal: run.signal });
 *   return { answer: answer.text, toolSummary: answer.calls, sessionId: session.id };
 * };
 */
export type Executor = (intent: string, run: ExecutorRun) => Promise<AgentResult>;

/** The conversation agent's reply: text, or tool calls meaning "this needs an executor". */
export interface ConversationReply {
  readonly text: string;
  readonly toolCalls: readonly ConversationToolCall[];
}

/** What the conversation agent gets: the ledger as messages, the new user message last. */
export interface ConversationTurn {
  readonly messages: readonly Message[];
  readonly signal: AbortSignal;
  /** Streams reply text to the client (`conversation_delta`). */
  readonly emit: (delta: string) => void;
}

/**
 * The conversation agent. `languageModelResponder` builds one from an AI SDK model (a `CliModel` included).
 *
 * @example
 * const conversation: ConversationResponder = async ({ messages }) => ({ text: "Hello!", toolCalls: [] });
 */
export type ConversationResponder = (turn: ConversationTurn) => Promise<ConversationReply>;
