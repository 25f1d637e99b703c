import { entryContent, type LedgerEntry } from "./ledger-entry.ts";

/** How speakers are named in a rendered context. */
export interface SpeakerLabels {
  /** Default "User". */
  readonly user?: string;
  /** Default "Assistant" (Contop uses its product name). */
  readonly assistant?: string;
}

/** What an executor receives for one intent: the conversation it has not seen yet, and the request. */
export interface ExecutionContext {
  readonly agent: string;
  readonly request: string;
  /** The entries after the agent's cursor that its session does not know (its own records excluded). */
  readonly prior: readonly LedgerEntry[];
  /** Absolute positions of the unseen range: `[from, to)`. */
  readonly from: number;
  readonly to: number;
  /** Unseen entries that the window had already dropped (they are lost to this agent). */
  readonly missed: number;
  /** `prior` rendered as `User: …` / `Assistant: …` lines (empty when there is none). */
  readonly context: string;
  /** The single message to send to the executor: the context block and the current request. */
  readonly message: string;
}

/**
 * Renders ledger entries as the lines of a `[Prior conversation for context]` block.
 *
 * @example
 * renderPriorConversation([{ role: "user", text: "Hi", at }, { role: "assistant", text: "Hello", at }]);
 * // "User: Hi\nAssistant: Hello"
 */
export function renderPriorConversation(entries: readonly LedgerEntry[], labels: SpeakerLabels = {}): string {
  const user = labels.user ?? "User";
  const assistant = labels.assistant ?? "Assistant";
  return entries
    .map((entry) => `${entry.role === "user" ? user : assistant}: ${entryContent(entry)}`)
    .join("\n");
}

/**
 * Combines a rendered context with the current request into the one message an executor receives. With no
 * context, the message is the request alone.
 *
 * @example
 * combineContext("User: What's the weather like?\nContop: It's sunny and 72°F.", "Open the weather app");
 * // "[Prior conversation for context]\nUser: What's the weather like?\nContop: It's sunny and 72°F.\n[Current request]\nOpen the weather app"
 */
export function combineContext(context: string, request: string): string {
  if (context.trim() === "") return request;
  return `[Prior conversation for context]\n${context}\n[Current request]\n${request}`;
}
