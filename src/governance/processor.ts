import type { ReuseRates } from "./reuse-rates.ts";
import type { Clock, IdGenerator } from "../model/ids.ts";
import type { JsonValue, Message } from "../model/message.ts";
import type { Summarizer } from "../summarize/summarizer.ts";
import type { GovernanceEvent } from "./events.ts";
import type { OffloadStore } from "./offload-store.ts";
import type { GovernorSettings } from "./governor-settings.ts";

/** The token budget of one request. */
export interface WindowBudget {
  /** The model's context window. */
  readonly contextWindow: number;
  /** Tokens kept free for the model's output. */
  readonly reservedOutput: number;
  /** `contextWindow - reservedOutput`: what the payload may use. */
  readonly usable: number;
}

/** Receives summaries of history that governance drops (long-term memory, a daily file, …). */
export type MemorySink = (entry: {
  sessionId: string;
  summary: string;
  messageIds: string[];
}) => void | Promise<void>;

/**
 * The inflation guard's memory, kept between requests. A segment whose summary came out no smaller than the
 * segment is remembered by its first message; it is not summarised again until it has grown by the retry margin,
 * and optional compaction pauses until the payload has, so a failing summarizer is never called on every
 * request (no compaction loops).
 */
export interface CompactionGuard {
  /** First message id of a failed segment → the segment's tokens when it failed. */
  failedSegments?: Record<string, number>;
  /**
   * Settled-history compaction waits until the payload has grown past this many tokens: set when the summarizer
   * failed or a summary did not shrink what it replaced, by either kind of compaction.
   */
  settledPausedBelow?: number;
  /** How the summarizer's summaries compare with settled-history compaction's estimate (actual / expected). */
  summarySizeRatio?: number;
}

/**
 * What every processor may use. Token figures are in the token counter's units, anchored on the provider's
 * reported usage (src/governance/usage-anchor.ts): `window` is the model's window divided by the anchor's scale
 * and `fixedTokens` carries any offset the counter misses, so comparing `fixedTokens + sumTokens(messages)` with
 * shares of `window` decides on the provider-anchored figure of whatever view a processor is looking at.
 */
export interface ProcessorContext {
  /**
   * The governor's settings (`GovernancePipeline.settings`): what processors share — the protection window,
   * `groundingTarget`, `tailShare`, `pricing`, … A processor's own options go to its factory, never here.
   */
  readonly settings: GovernorSettings;
  /** The window in the counter's units (the model's own, until a provider reported its usage). */
  readonly window: WindowBudget;
  /** Payload tokens outside the messages: system prompt, tool definitions (and an offset the counter misses). */
  readonly fixedTokens: number;
  /** Token count of one message (cached: each message is counted once). */
  readonly tokensOf: (message: Message) => number;
  readonly summarizer: Summarizer;
  readonly offloadStore?: OffloadStore;
  /** Whether the agent can call `recall_tool_output` (notices say how only then). Absent: it can. */
  readonly recall?: boolean;
  readonly memorySink?: MemorySink;
  readonly guard: CompactionGuard;
  /** True when the pre-flight check found the request would overflow: compaction must run. */
  readonly force: boolean;
  /** Set for a user-initiated compaction (`/compact [focus]`): runs whatever the thresholds say. */
  readonly manual?: { readonly focus?: string };
  /**
   * The reuse rates `groundingTarget` weighs: the settings' (or the measured defaults) blended with what this
   * session's agent used again so far. Absent: the settings'.
   */
  readonly reuseRates?: ReuseRates;
  /** Requests this governor has prepared so far, this one included (for the prompt-cache arithmetic). */
  readonly requestsSoFar?: number;
  /**
   * Where a rewrite of the view from a given index starts writing to the provider's cache (see `rewriteStart`);
   * undefined when nothing is cached any more. Absent: the rewrite is priced from the change itself.
   */
  readonly rewriteStart?: (firstChange: number) => number | undefined;
  /** Tokens new in this request, written to the cache with or without a rewrite. */
  readonly freshTokens?: number;
  readonly ids: IdGenerator;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
  emit(event: GovernanceEvent): void;
}

/**
 * When the governor runs a processor. The checkpoint triggers (`checkpoint`, `payload-share`, `turn-count`,
 * `message-count`, `tool-output`, `settled-history`) put it in the fold run at checkpoints; all but `checkpoint`
 * also make the governor take one. The others run it in a stage of its own.
 *
 * - `checkpoint`: runs whenever a checkpoint is taken, whatever took it; takes none itself.
 * - `payload-share`: a mandatory checkpoint once the provider-anchored payload passes `share` of the usable window.
 * - `turn-count`: a mandatory checkpoint once the view holds more than `above` user turns.
 * - `message-count`: a mandatory checkpoint once the view holds more than `above` messages.
 * - `tool-output`: an optional checkpoint (taken when the prompt-cache arithmetic says it pays) once the tool
 *   output and long tool-call arguments piled up since the last checkpoint pass the protection window by `tokens`
 *   — by at most `windowShare` of the usable window, when given.
 * - `settled-history`: an optional checkpoint once enough history came after the newest summary to summarise
 *   (the protection window plus a batch: the settings' `protectTokens + batchTokens`, window-capped).
 * - `tool-input`: string arguments of tool calls above `above` tokens count as tool traffic piling up (toward
 *   `tool-output` triggers); takes no checkpoint and runs nothing itself.
 * - `each-message`: runs on each new message alone as it arrives, before it joins the view (every request).
 * - `overflow`: runs, forced, when the request would overflow the window after the checkpoint (pipeline order).
 * - `user-request`: runs on a user's `/compact` (`Governor.compact`).
 */
export type ProcessorTrigger =
  | { readonly kind: "checkpoint" }
  | { readonly kind: "payload-share"; readonly share: number }
  | { readonly kind: "turn-count"; readonly above: number }
  | { readonly kind: "message-count"; readonly above: number }
  | { readonly kind: "tool-output"; readonly tokens: number; readonly windowShare?: number }
  | { readonly kind: "settled-history" }
  | { readonly kind: "tool-input"; readonly above: number }
  | { readonly kind: "each-message" }
  | { readonly kind: "overflow" }
  | { readonly kind: "user-request" };

/** The trigger of a processor that declares none: it runs at every checkpoint. */
export const AT_EVERY_CHECKPOINT: readonly ProcessorTrigger[] = Object.freeze([{ kind: "checkpoint" }]);

/**
 * One step of the governance pipeline: takes the message list, returns a new one (never mutating its input),
 * and says when it runs (`triggers`; none declared: at every checkpoint). The built-in ones are made by
 * factories with their own validated options (`createTrimTurns({ maxTurns: 30 })`, …); presets assemble them.
 *
 * @example
 * const dropGreetings: Processor = {
 *   name: "drop-greetings",
 *   process: (messages) => messages.filter((message) => !/^hi\b/i.test(messageText(message))),
 * };
 */
export interface Processor {
  readonly name: string;
  /** When the governor runs it (see `ProcessorTrigger`). Absent: at every checkpoint, taking none itself. */
  readonly triggers?: readonly ProcessorTrigger[];
  /**
   * True when it moves content into the offload store behind a notice telling the agent to call
   * `recall_tool_output`: an engine then offers that tool.
   */
  readonly offloads?: boolean;
  /**
   * The options its factory resolved, as JSON (the built-in processors): a session's governance record keeps them
   * so a replay rebuilds the same processor (`describePipeline`).
   */
  readonly options?: { readonly [key: string]: JsonValue };
  process(
    messages: readonly Message[],
    context: ProcessorContext,
  ): readonly Message[] | Promise<readonly Message[]>;
  /**
   * Work a later checkpoint of this processor will need, done a little at a time on every request (the offload
   * previews of outputs that just left the protection window), so the checkpoint reuses it instead of doing it
   * all at once: the replacements it makes are remembered under everything they depend on, so the checkpoint gets
   * the same objects back only when it would have made the same ones. Returns them, and the governor counts them
   * (asynchronously, like new messages). It changes nothing and emits nothing; an error it throws is ignored (the
   * checkpoint does the work then).
   */
  prepareAhead?(
    messages: readonly Message[],
    context: ProcessorContext,
  ): readonly Message[] | Promise<readonly Message[]>;
}

/** Sum of the tokens of `messages`. */
export function sumTokens(messages: readonly Message[], tokensOf: (message: Message) => number): number {
  let total = 0;
  for (const message of messages) total += tokensOf(message);
  return total;
}

/**
 * Runs processors in order, each on the previous one's output: the pipeline is one fold.
 *
 * @example
 * const view = await runPipeline(preset("default").processors, history, context);
 */
export async function runPipeline(
  processors: readonly Processor[],
  messages: readonly Message[],
  context: ProcessorContext,
): Promise<readonly Message[]> {
  let current = messages;
  for (const processor of processors) {
    context.signal?.throwIfAborted();
    current = await processor.process(current, context);
  }
  return current;
}
