import type { JsonValue, Message } from "../../model/message.ts";

/**
 * Every transcript format ctxkit can import.
 *
 * @example
 * program.option("--format <format>").choices([...TRANSCRIPT_FORMATS, "auto"]);
 */
export const TRANSCRIPT_FORMATS = [
  "claude-code",
  "codex",
  "gemini-cli",
  "openai",
  "swe-agent",
  "ctxkit",
] as const;

/** A transcript format: an agent's log format, OpenAI chat JSON, or ctxkit's own JSONL. */
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

/**
 * One conversation read from a transcript. A file may hold several (tau-bench episodes, a ctxkit export, a
 * Claude Code file with sidechain records).
 */
export interface ImportedConversation {
  /** Stable id taken from the transcript (session id, task id, file name). Also every message's `sessionId`. */
  readonly id: string;
  /** The format the conversation was first imported from (a ctxkit JSONL export keeps the original format). */
  readonly format: TranscriptFormat;
  /** Where it came from: the file path given to the importer. */
  readonly source: string;
  readonly title?: string;
  /** In order. Assistant messages keep the provider-reported `usage` when the transcript has it. */
  readonly messages: readonly Message[];
  /** True for a Claude Code subagent transcript. */
  readonly sidechain?: boolean;
  /** Transcript facts that are not messages (cwd, CLI version, task id, reward, …). */
  readonly metadata?: { readonly [key: string]: JsonValue };
}

/**
 * True when `value` names a transcript format.
 *
 * @example
 * isTranscriptFormat("codex"); // true
 */
export function isTranscriptFormat(value: unknown): value is TranscriptFormat {
  return (TRANSCRIPT_FORMATS as readonly unknown[]).includes(value);
}
